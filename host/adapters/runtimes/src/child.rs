//! Running a runtime's CLI as a child process: in a process group of its
//! own, with only the environment it was given, its stdout read line by
//! line as it comes, and the whole group, with every process it started,
//! killed on a timeout, a limit, an interrupt, or when the run is dropped.

use crate::tree;
use kaizen_protocol::{CancellationToken, Status};
use kaizen_sandbox::launcher::{self, Unconfined};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdout};

/// How long a group has to end after SIGINT or SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// The most of its stderr kept to explain a failure.
const STDERR_TAIL: usize = 8 * 1024;

/// The command to run.
#[derive(Debug, Clone)]
pub(crate) struct ChildSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The whole environment: nothing else is inherited.
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

/// Why the child stopped before it ended by itself.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stop {
    pub status: Status,
    pub message: String,
}

/// How the child ended.
#[derive(Debug)]
pub(crate) struct Ended {
    /// Its exit code, when it exited rather than being killed.
    pub code: Option<i32>,
    /// What stopped it, when it did not end by itself.
    pub stopped: Option<Stop>,
    /// The end of what it wrote to stderr.
    pub stderr: String,
    /// How long it ran.
    pub duration: Duration,
}

/// Kills the whole group when dropped, unless it is already gone.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn signal(&self, signal: i32) {
        if let Some(pgid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals the group we made;
            // a group that is gone only yields ESRCH.
            unsafe { libc::kill(-pgid, signal) };
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // Whatever the child left behind in its group goes with it, and
        // (when the run is dropped while the child lives) what it started.
        let started = self.0.map(tree::descendants).unwrap_or_default();
        self.signal(libc::SIGKILL);
        tree::kill_all(&started);
    }
}

/// Runs `spec`, handing each stdout line to `on_line`, which may ask for
/// the run to stop (a limit it saw crossed). `timeout` and `interrupt`
/// stop it too: SIGINT (interrupt) or SIGTERM to the group, then SIGKILL
/// after a grace period.
pub(crate) async fn run(
    spec: &ChildSpec,
    timeout: Option<Duration>,
    interrupt: &CancellationToken,
    on_line: impl FnMut(&str) -> Option<Stop>,
) -> std::io::Result<Ended> {
    let started = Instant::now();
    let mut child = launcher::unconfined_async(Unconfined::OtherAgent, &spec.program)
        .args(&spec.args)
        .envs(&spec.env)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let group = GroupGuard(child.id().and_then(|id| i32::try_from(id).ok()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let stderr_task = tokio::spawn(stderr_tail(stderr));
    let ending = watch(&mut child, stdout, timeout, interrupt, on_line).await?;
    let (status, stopped) = match ending {
        Ending::Exited(status) => (status, None),
        Ending::Stopped(stop, signal) => {
            (stop_group(&group, &mut child, signal).await?, Some(stop))
        }
    };
    drop(group);
    let stderr = stderr_task.await.unwrap_or_default();
    Ok(Ended {
        code: status.code(),
        stopped,
        stderr,
        duration: started.elapsed(),
    })
}

/// How watching the child ended.
enum Ending {
    /// It exited by itself, with this status.
    Exited(ExitStatus),
    /// It is to be stopped, for this reason, with this signal first.
    Stopped(Stop, i32),
}

/// Reads the end of `stderr`, keeping at most [`STDERR_TAIL`] bytes of it.
async fn stderr_tail(mut stderr: ChildStderr) -> String {
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 2 * STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
    }
    let start = tail.len().saturating_sub(STDERR_TAIL);
    String::from_utf8_lossy(&tail[start..]).into_owned()
}

/// Hands `stdout`'s lines to `on_line` until the child exits, or until
/// `on_line`, the timeout or the interrupt says to stop it.
async fn watch(
    child: &mut Child,
    stdout: ChildStdout,
    timeout: Option<Duration>,
    interrupt: &CancellationToken,
    mut on_line: impl FnMut(&str) -> Option<Stop>,
) -> std::io::Result<Ending> {
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let expired = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(expired);
    let mut lines = BufReader::new(stdout).lines();
    let mut reading = true;
    loop {
        tokio::select! {
            line = lines.next_line(), if reading => match line {
                Ok(Some(line)) => {
                    if let Some(stop) = on_line(&line) {
                        return Ok(Ending::Stopped(stop, libc::SIGTERM));
                    }
                }
                // End of output (or unreadable output): wait for the exit.
                Ok(None) | Err(_) => reading = false,
            },
            status = child.wait(), if !reading => return Ok(Ending::Exited(status?)),
            () = &mut expired => {
                let secs = timeout.unwrap_or_default().as_secs_f64();
                let stop = Stop {
                    status: Status::Timeout,
                    message: format!("the run took longer than its timeout ({secs}s) and was stopped"),
                };
                return Ok(Ending::Stopped(stop, libc::SIGTERM));
            }
            () = interrupt.cancelled() => {
                let stop = Stop {
                    status: Status::Interrupted,
                    message: "interrupted".to_string(),
                };
                return Ok(Ending::Stopped(stop, libc::SIGINT));
            }
        }
    }
}

/// Sends `signal` to the group, then SIGKILL after [`GRACE`], and kills
/// what the child had started; the child's exit status.
async fn stop_group(
    group: &GroupGuard,
    child: &mut Child,
    signal: i32,
) -> std::io::Result<ExitStatus> {
    // Found before the signal, while the tree is whole: once the CLI is
    // gone, what it started belongs to init.
    let started = group.0.map(tree::descendants).unwrap_or_default();
    group.signal(signal);
    let status = match tokio::time::timeout(GRACE, child.wait()).await {
        Ok(status) => status?,
        Err(_) => {
            group.signal(libc::SIGKILL);
            child.wait().await?
        }
    };
    tree::kill_all(&started);
    Ok(status)
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "a test starts its own helper processes"
)]
mod tests {
    use super::*;

    fn sh(script: &str) -> ChildSpec {
        ChildSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: [("ONLY".to_string(), "given".to_string())].into(),
            cwd: std::env::temp_dir(),
        }
    }

    #[tokio::test]
    async fn lines_exit_code_stderr_and_nothing_but_the_given_environment() {
        // SAFETY: no other test of this crate reads the environment.
        unsafe { std::env::set_var("KAIZEN_CHILD_SECRET", "leak") };
        let mut lines = Vec::new();
        let ended = run(
            &sh("echo \"$ONLY|$KAIZEN_CHILD_SECRET|$HOME\"; echo second; echo oops >&2; exit 4"),
            None,
            &CancellationToken::new(),
            |line| {
                lines.push(line.to_string());
                None
            },
        )
        .await
        .unwrap();
        assert_eq!(lines, ["given||", "second"]);
        assert_eq!(ended.code, Some(4));
        assert_eq!(ended.stopped, None);
        assert_eq!(ended.stderr, "oops\n");
    }

    #[tokio::test]
    async fn a_timeout_an_interrupt_or_a_limit_stops_the_whole_group() {
        let script = "echo started; sleep 30 & wait";
        let ended = run(
            &sh(script),
            Some(Duration::from_millis(300)),
            &CancellationToken::new(),
            |_| None,
        )
        .await
        .unwrap();
        assert_eq!(ended.stopped.unwrap().status, Status::Timeout);
        assert!(ended.duration < Duration::from_secs(10));

        let interrupt = CancellationToken::new();
        let stopper = interrupt.clone();
        let ended = run(&sh(script), None, &interrupt, |_| {
            stopper.cancel();
            None
        })
        .await
        .unwrap();
        assert_eq!(ended.stopped.unwrap().status, Status::Interrupted);

        let limit = Stop {
            status: Status::MaxCycles,
            message: "limit".into(),
        };
        let ended = run(&sh(script), None, &CancellationToken::new(), |_| {
            Some(limit.clone())
        })
        .await
        .unwrap();
        assert_eq!(ended.stopped, Some(limit));
        assert!(ended.duration < Duration::from_secs(10));
    }
}
