//! The contract's `process` interface: programs a plugin starts run in the
//! OS sandbox of the plugin and session (see [`super::sandboxes`]).

use super::Process;
use crate::bindings::process;
use crate::caps::CapView;
use kaizen_sandbox::{Command, ProcessError, Sandbox};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A store's way to the session's sandbox.
pub(crate) struct ProcessAccess {
    sandbox: Result<Arc<Sandbox>, String>,
    programs: Arc<[String]>,
}

impl ProcessAccess {
    /// Access to `sandbox` (or why there is none) for `programs`.
    pub fn new(sandbox: Result<Arc<Sandbox>, String>, programs: Arc<[String]>) -> Self {
        Self { sandbox, programs }
    }

    fn sandbox(&self) -> Result<&Sandbox, process::ProcessError> {
        self.sandbox
            .as_deref()
            .map_err(|why| process::ProcessError::Sandbox(why.clone()))
    }

    /// Whether the grant names `program` (by its file name) or `*`.
    fn allows(&self, program: &str) -> bool {
        let name = Path::new(program)
            .file_name()
            .map_or(program.into(), |name| name.to_string_lossy());
        self.programs.iter().any(|p| p == "*" || *p == name)
    }

    fn check(&self, program: &str) -> Result<&Sandbox, process::ProcessError> {
        if !self.allows(program) {
            return Err(process::ProcessError::NotAllowed(format!(
                "`{program}` is not among the programs this plugin was granted ({}); the operator can add it under [grants.<plugin>] process.programs in kaizen.toml",
                self.programs.join(", ")
            )));
        }
        self.sandbox()
    }
}

/// The shell plugins name in `shell-run` and `spawn` is run by bash.
const SHELL_PROGRAM: &str = "bash";

/// How long `run` and `shell-run` let a program go when the plugin names
/// no timeout (Bash's default): waiting for a program is not the plugin's
/// CPU time, so without a bound a stuck program would hold the call
/// forever.
pub const DEFAULT_PROCESS_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest timeout a plugin may ask for (Bash's ceiling); longer ones
/// are cut to it.
pub const MAX_PROCESS_TIMEOUT: Duration = Duration::from_secs(600);

/// The timeout a program gets when the plugin asked for `timeout_ms`.
fn process_timeout(timeout_ms: Option<u64>) -> Duration {
    timeout_ms
        .map_or(DEFAULT_PROCESS_TIMEOUT, Duration::from_millis)
        .min(MAX_PROCESS_TIMEOUT)
}

impl CapView<'_, Process> {
    fn process_access(&self) -> Result<&ProcessAccess, process::ProcessError> {
        self.state.as_ref().ok_or_else(|| {
            process::ProcessError::Failed(
                "the process capability is not available in this call".into(),
            )
        })
    }
}

impl process::Host for CapView<'_, Process> {
    async fn run(
        &mut self,
        cmd: process::Command,
    ) -> Result<process::Output, process::ProcessError> {
        let sandbox = self.process_access()?.check(&cmd.program)?;
        let command = Command {
            program: cmd.program,
            args: cmd.args,
            cwd: cmd
                .cwd
                .map(PathBuf::from)
                .or_else(|| self.cwd.map(Path::to_path_buf)),
            env: cmd.env,
            stdin: cmd.stdin,
            timeout: Some(process_timeout(cmd.timeout_ms)),
        };
        // Waiting for a program is not the plugin's CPU time.
        self.clock.begin_wait();
        let output = sandbox.run(command).await;
        self.clock.end_wait();
        output.map(convert_output).map_err(convert_error)
    }

    async fn shell_run(
        &mut self,
        shell: String,
        script: String,
        timeout_ms: Option<u64>,
    ) -> Result<process::Output, process::ProcessError> {
        let sandbox = self.process_access()?.check(SHELL_PROGRAM)?;
        self.clock.begin_wait();
        let output = sandbox
            .shell_run(&shell, &script, Some(process_timeout(timeout_ms)))
            .await;
        self.clock.end_wait();
        output.map(convert_output).map_err(convert_error)
    }

    async fn spawn(
        &mut self,
        shell: String,
        script: String,
    ) -> Result<String, process::ProcessError> {
        let sandbox = self.process_access()?.check(SHELL_PROGRAM)?;
        sandbox.spawn(&shell, &script).await.map_err(convert_error)
    }

    async fn read_job(&mut self, id: String) -> Result<process::JobOutput, process::ProcessError> {
        let sandbox = self.process_access()?.sandbox()?;
        let job = sandbox.read_job(&id).map_err(convert_error)?;
        Ok(process::JobOutput {
            state: match job.state {
                kaizen_sandbox::JobState::Running => process::JobState::Running,
                kaizen_sandbox::JobState::Exited(code) => process::JobState::Exited(code),
                kaizen_sandbox::JobState::Killed => process::JobState::Killed,
            },
            stdout: job.stdout,
            stderr: job.stderr,
        })
    }

    async fn kill_job(&mut self, id: String) -> Result<(), process::ProcessError> {
        let sandbox = self.process_access()?.sandbox()?;
        sandbox.kill_job(&id).await.map_err(convert_error)
    }
}

fn convert_output(output: kaizen_sandbox::Output) -> process::Output {
    process::Output {
        exit_code: output.exit_code,
        signal: output.signal,
        stdout: output.stdout,
        stderr: output.stderr,
        truncated: output.truncated,
        timed_out: output.timed_out,
    }
}

fn convert_error(error: ProcessError) -> process::ProcessError {
    match error {
        ProcessError::NotFound(why) => process::ProcessError::NotFound(why),
        ProcessError::Sandbox(why) => process::ProcessError::Sandbox(why),
        ProcessError::UnknownId(why) => process::ProcessError::UnknownId(why),
        ProcessError::Failed(why) => process::ProcessError::Failed(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_always_has_a_bounded_timeout() {
        assert_eq!(process_timeout(None), DEFAULT_PROCESS_TIMEOUT);
        assert_eq!(process_timeout(Some(1_500)), Duration::from_millis(1_500));
        assert_eq!(process_timeout(Some(u64::MAX)), MAX_PROCESS_TIMEOUT);
    }
}
