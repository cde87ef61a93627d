//! Background jobs: a sandboxed process left running, its output collected
//! by a task into bounded buffers until someone reads it.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{oneshot, watch};

use crate::capture::Unread;
use crate::exec::{Running, wait_and_drain};
use crate::state_dir::StateFile;
use crate::types::{JobOutput, JobState};

/// What the collecting task shares with readers.
#[derive(Debug)]
struct Shared {
    stdout: Unread,
    stderr: Unread,
    state: JobState,
}

/// One background job.
#[derive(Debug)]
pub(crate) struct Job {
    shared: Arc<Mutex<Shared>>,
    /// Dropping or firing it makes the task kill the job.
    kill: Mutex<Option<oneshot::Sender<()>>>,
    /// Becomes true once the process ended and its output was collected.
    done: watch::Receiver<bool>,
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// Copies one pipe into the shared buffer until it closes.
async fn pump(
    pipe: Option<impl AsyncRead + Unpin>,
    shared: &Mutex<Shared>,
    stderr: bool,
    cap: usize,
) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut guard = lock(shared);
                let buf = if stderr {
                    &mut guard.stderr
                } else {
                    &mut guard.stdout
                };
                buf.push(&chunk[..n], cap);
            }
        }
    }
}

impl Job {
    /// Starts collecting a spawned process; `script` is a long script's file,
    /// removed when the job ends.
    pub(crate) fn start(running: Running, cap: usize, script: Option<StateFile>) -> Arc<Job> {
        let Running {
            stdin: _,
            stdout,
            stderr,
            mut exit,
            handle,
            registration,
        } = running;
        let shared = Arc::new(Mutex::new(Shared {
            stdout: Unread::default(),
            stderr: Unread::default(),
            state: JobState::Running,
        }));
        let (kill_tx, mut kill_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = watch::channel(false);
        let job = Arc::new(Job {
            shared: shared.clone(),
            kill: Mutex::new(Some(kill_tx)),
            done: done_rx,
        });
        tokio::spawn(async move {
            let reading = async {
                tokio::join!(
                    pump(stdout, &shared, false, cap),
                    pump(stderr, &shared, true, cap)
                )
            };
            let waiting = async {
                tokio::select! {
                    status = exit.wait() => (status, false),
                    // Fired by kill_job, or dropped with the Sandbox.
                    _ = &mut kill_rx => {
                        handle.kill_group();
                        handle.kill();
                        (exit.wait().await, true)
                    }
                }
            };
            let (status, killed) = wait_and_drain(reading, waiting).await;
            let code = status.ok().and_then(|s| s.code());
            lock(&shared).state = match code {
                Some(code) if !killed => JobState::Exited(code),
                _ => JobState::Killed,
            };
            drop(registration);
            drop(script);
            let _ = done_tx.send(true);
        });
        job
    }

    /// The state, leaving the output unread.
    pub(crate) fn state(&self) -> JobState {
        lock(&self.shared).state
    }

    /// Output since the last read, and the state.
    pub(crate) fn read(&self) -> JobOutput {
        let mut guard = lock(&self.shared);
        JobOutput {
            state: guard.state,
            stdout: guard.stdout.take(),
            stderr: guard.stderr.take(),
        }
    }

    /// Kills the job and waits until it is gone and its output collected.
    pub(crate) async fn kill(&self) {
        let sender = self.kill.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(sender) = sender {
            let _ = sender.send(());
        }
        self.wait().await;
    }

    /// Waits until the job has ended.
    pub(crate) async fn wait(&self) {
        let mut done = self.done.clone();
        let _ = done.wait_for(|d| *d).await;
    }
}
