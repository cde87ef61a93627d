//! [`Attached`]: a sandboxed program whose standard input and output stay
//! connected to the host for as long as it runs, for programs that speak a
//! protocol on them (an MCP server on stdio).

use std::sync::Arc;

use tokio::process::{ChildStdin, ChildStdout};

use crate::exec::Running;
use crate::jobs::Job;
use crate::types::{JobOutput, JobState, ProcessError};

/// A running sandboxed program with its stdin and stdout in the host's
/// hands. Its stderr is collected (the newest bytes, bounded like a
/// background job's output) for [`Attached::read_stderr`]. Dropping it
/// kills the program and everything it started, as does dropping the
/// [`crate::Sandbox`].
#[derive(Debug)]
pub struct Attached {
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    job: Arc<Job>,
}

impl Attached {
    pub(crate) fn start(mut running: Running, cap: usize) -> Result<Self, ProcessError> {
        let pipes = (running.stdin.take(), running.stdout.take());
        // The job collects stderr and waits for the end; its stdin and
        // stdout are ours.
        let job = Job::start(running, cap, None);
        match pipes {
            (Some(stdin), Some(stdout)) => Ok(Attached {
                stdin: Some(stdin),
                stdout: Some(stdout),
                job,
            }),
            _ => Err(ProcessError::Failed(
                "the program's standard streams could not be attached".into(),
            )),
        }
    }

    /// The program's standard input and output, once (a transport owns
    /// them from then on).
    pub fn take_pipes(&mut self) -> Option<(ChildStdin, ChildStdout)> {
        Some((self.stdin.take()?, self.stdout.take()?))
    }

    /// Whether the program is still running, or how it ended.
    pub fn state(&self) -> JobState {
        self.job.state()
    }

    /// Whether the program is still running, and what it wrote to stderr
    /// since the last read (`stdout` is always empty: it is attached).
    pub fn read_stderr(&self) -> JobOutput {
        self.job.read()
    }

    /// Waits until the program has ended.
    pub async fn wait(&self) {
        self.job.wait().await;
    }

    /// Kills the program and everything it started; returns once it is
    /// gone.
    pub async fn kill(&self) {
        self.job.kill().await;
    }
}
