//! `crash-planner`: adds a line to the system prompt of the first THINK,
//! then panics on the second plan, so that tests see a planner that
//! worked, failed, and was switched off.

use kaizen_sdk::export_planner;
use kaizen_sdk::planner::{Context, Plan, Planner};

struct CrashPlanner;

impl Planner for CrashPlanner {
    fn plan(ctx: Context) -> Plan {
        if ctx.cycle > 1 {
            panic!("the crash planner crashes on cycle {}", ctx.cycle);
        }
        Plan::default().with_system("CRASH-PLANNER-WAS-HERE")
    }
}

export_planner!(CrashPlanner);
