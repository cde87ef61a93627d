//! `react`: the plain loop as a planner. Every THINK runs as it would
//! without a planner, every answer stands, and no model call is added;
//! choosing it is the same as choosing none, spelled out.

use kaizen_sdk::export_planner;
use kaizen_sdk::planner::{Context, Plan, Planner};

struct React;

impl Planner for React {
    fn plan(_ctx: Context) -> Plan {
        Plan::default()
    }
}

export_planner!(React);
