//! A run's planner as the embedder sets it up: the planner, its settings
//! and the bounds on what it may ask of the loop. `stages/plan.rs` drives
//! it.

use kaizen_planning::Planner;
use std::fmt;
use std::sync::Arc;

/// Revisions a run's planner may ask for unless the config says otherwise.
pub const DEFAULT_MAX_REVISIONS: u32 = 2;
/// Candidate responses per THINK a planner may ask for unless the config
/// says otherwise.
pub const DEFAULT_MAX_CANDIDATES: u32 = 5;

/// A run's planner and its bounds.
#[derive(Clone)]
pub struct PlannerSetup {
    /// The planner.
    pub planner: Arc<dyn Planner>,
    /// Its settings from the config (a JSON object).
    pub settings: serde_json::Value,
    /// Most revisions `verify` may get in one run.
    pub max_revisions: u32,
    /// Most candidate responses per THINK.
    pub max_candidates: u32,
}

impl PlannerSetup {
    /// `planner` with no settings and the default bounds.
    pub fn new(planner: Arc<dyn Planner>) -> Self {
        Self {
            planner,
            settings: serde_json::json!({}),
            max_revisions: DEFAULT_MAX_REVISIONS,
            max_candidates: DEFAULT_MAX_CANDIDATES,
        }
    }
}

impl fmt::Debug for PlannerSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlannerSetup")
            .field("planner", &self.planner.name())
            .field("settings", &self.settings)
            .field("max_revisions", &self.max_revisions)
            .field("max_candidates", &self.max_candidates)
            .finish()
    }
}
