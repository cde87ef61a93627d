//! The evaluation harness behind `kaizen eval`: task folders run with each
//! planner, reporting per task and planner whether the task's check
//! passed, the model calls, the tokens and the cost. A task folder (the
//! shape of Terminal-Bench's, without the container) holds:
//!
//! - `task.toml`: `instruction = "..."`, and optionally `max-cycles`;
//! - `workspace/`: the files the task starts from (copied for each run);
//! - `check.sh`: run with bash in the workspace after the run, in the OS
//!   sandbox (the run's workspace writable, the task folder readable, no
//!   network, no provider key: it judges files the model wrote, which may
//!   be hostile); exit 0 means the task was done;
//! - `script.json` (optional): the scripted model's turns, for offline runs
//!   against `kaizen-model-server` (the harness itself never reads it).
//!
//! Each run is `kaizen run` ([`EvalOptions::kaizen`]) in a fresh copy of
//! the workspace, against whatever model the options and environment
//! choose, so the same evaluation compares planners on a real model.

mod check;
mod report;
mod run;
mod task;

pub use report::{Row, Summary, summaries};
pub use task::{TASK_FILE, Task, TaskError, TaskFile, find_tasks};

use crate::config::kaizen_home;
use crate::plugin_host::state_containment;
use std::path::PathBuf;

/// What to evaluate, and the limits of each run.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Task folders, or folders of task folders.
    pub tasks: Vec<PathBuf>,
    /// Planner names or directories; `none` (the plain loop) when empty.
    pub planners: Vec<String>,
    /// The `kaizen` binary each run is.
    pub kaizen: PathBuf,
    /// The model (as for `kaizen run`).
    pub model: Option<String>,
    /// The provider (as for `kaizen run`).
    pub provider: Option<String>,
    /// Model calls per run at most (a task's own cap may be lower).
    pub max_cycles: u32,
    /// USD per run at most.
    pub budget_usd: f64,
    /// Seconds per run at most.
    pub timeout_secs: f64,
    /// The runs' permission mode.
    pub permission_mode: String,
}

impl EvalOptions {
    /// The planners each task runs with.
    pub fn planners(&self) -> Vec<String> {
        if self.planners.is_empty() {
            vec!["none".to_string()]
        } else {
            self.planners.clone()
        }
    }

    /// The flags every `kaizen run` gets (`--model`, limits, ...).
    fn run_flags(&self) -> Vec<String> {
        let mut flags = vec![
            "--budget-usd".to_string(),
            self.budget_usd.to_string(),
            "--timeout".to_string(),
            self.timeout_secs.to_string(),
            "--permission-mode".to_string(),
            self.permission_mode.clone(),
        ];
        for (flag, value) in [("--model", &self.model), ("--provider", &self.provider)] {
            if let Some(value) = value {
                flags.extend([flag.to_string(), value.clone()]);
            }
        }
        flags
    }
}

/// Runs every task with every planner, telling `each` of every row as its
/// run ends; the rows, by task then planner.
pub async fn eval(
    options: &EvalOptions,
    mut each: impl FnMut(&Row) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<Row>> {
    let tasks = find_tasks(&options.tasks)?;
    if tasks.is_empty() {
        return Err(TaskError::NoTasks.into());
    }
    let planners = options.planners();
    let containment = state_containment(&kaizen_home()?)?;
    let mut rows = Vec::new();
    for task in &tasks {
        for planner in &planners {
            let row = run::run_one(task, planner, options, &containment).await?;
            each(&row)?;
            rows.push(row);
        }
    }
    Ok(rows)
}
