//! A task's `check.sh`, run in the OS sandbox: it judges files the model
//! wrote, which may be hostile, so it gets the run's workspace to write,
//! the task's folder to read, and no network or provider key.

use super::task::Task;
use anyhow::Context as _;
use kaizen_sandbox::{Containment, Sandbox};
use std::path::Path;
use std::time::Duration;

/// How long a task's check may run.
const CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the task's check in `workspace`, in the OS sandbox (`workspace`
/// writable, the task's folder readable); true when it exits 0 in time.
pub async fn check(
    task: &Task,
    workspace: &Path,
    containment: &Containment,
) -> anyhow::Result<bool> {
    let mut containment = containment.clone();
    containment.writable = vec![workspace.to_path_buf()];
    containment.readable = vec![task.dir.clone()];
    let sandbox = Sandbox::new(containment.policy(containment.session_scope(), &[]))
        .context("starting the OS sandbox for check.sh")?;
    let output = sandbox
        .run(kaizen_sandbox::Command {
            program: "bash".into(),
            args: vec![task.dir.join("check.sh").display().to_string()],
            cwd: Some(workspace.to_path_buf()),
            timeout: Some(CHECK_TIMEOUT),
            ..kaizen_sandbox::Command::default()
        })
        .await
        .context("running check.sh")?;
    Ok(!output.timed_out && output.exit_code == Some(0))
}
