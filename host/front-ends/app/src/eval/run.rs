//! One task run with one planner: `kaizen run` in a fresh copy of the
//! task's workspace, its `events` tallied, then the task's check.

use super::EvalOptions;
use super::check::check;
use super::report::Row;
use super::task::Task;
use anyhow::Context as _;
use kaizen_sandbox::Containment;
use kaizen_sandbox::launcher::{self, Unconfined};
use std::process::Stdio;

/// Runs `task` with `planner` in a fresh copy of its workspace, then its
/// check.
pub async fn run_one(
    task: &Task,
    planner: &str,
    options: &EvalOptions,
    containment: &Containment,
) -> anyhow::Result<Row> {
    let scratch = tempfile::tempdir()?;
    let workspace = scratch.path().join("workspace");
    let seed = task.dir.join("workspace");
    if seed.is_dir() {
        crate::kits::copy_tree(&seed, &workspace)?;
    } else {
        std::fs::create_dir_all(&workspace)?;
    }
    // Kaizen itself, with the caller's environment (the provider's key):
    // it confines what the run does.
    let mut run = launcher::unconfined_async(Unconfined::KaizenItself, &options.kaizen);
    run.envs(std::env::vars_os())
        .arg("run")
        .arg("--cwd")
        .arg(&workspace)
        .args(["--output-format", "events"])
        .args(options.run_flags());
    let max_cycles = task
        .spec
        .max_cycles
        .map_or(options.max_cycles, |own| own.min(options.max_cycles));
    run.args(["--max-cycles", &max_cycles.to_string()]);
    if planner != "none" {
        run.args(["--planner", planner]);
    }
    run.arg(&task.spec.instruction)
        .current_dir(&workspace)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let output = run.output().await.context("starting kaizen run")?;
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let mut row = Row::tally(&task.name, planner, &lines);
    if lines.last().is_none_or(|last| last["type"] != "result") {
        let stderr = String::from_utf8_lossy(&output.stderr);
        row.error = Some(format!("kaizen run printed no result: {}", stderr.trim()));
        return Ok(row);
    }
    row.passed = check(task, &workspace, containment).await?;
    Ok(row)
}
