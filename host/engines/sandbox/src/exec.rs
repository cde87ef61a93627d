//! Starting one sandboxed process and running it to its end.
//!
//! Every process gets its own sandbox: a fresh Landlock ruleset, namespaces,
//! limits and filters, set up by [`crate::child`] between fork and exec,
//! which the session's spawner ([`crate::spawner`]) runs for the host. The
//! host side keeps a pidfd of the intermediate process so that kills can never
//! hit a recycled PID, and registers it so that [`crate::Sandbox`] can kill
//! everything, even synchronously from `Drop`.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::oneshot;

use crate::capture::HeadTail;
use crate::child;
use crate::landlock_rules::{self, FsGrant};
use crate::plan::Plan;
use crate::spawner::{self, NotStarted, Spawner};
use crate::types::{Output, ProcessError};

/// How long to keep reading output after the process ended. Normally the
/// pipes close with the namespace; a descendant that passed its stdout to a
/// process elsewhere (say, over a unix socket in the workspace) must not hang
/// the call.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The host's handle on a running process: the intermediate, or, from a
/// warm sandbox, PID 1 of the command's namespaces itself.
#[derive(Debug)]
pub(crate) struct ProcHandle {
    pid: i32,
    pidfd: Option<OwnedFd>,
    /// Whether the host is its parent (the cold path): only then may it
    /// signal its process group by number.
    parent: bool,
    /// The spawner that started it, kept while the process runs: a retired
    /// spawner (see `spawner/fingerprint.rs`) ends with its last process.
    _spawner: Option<Arc<Spawner>>,
}

impl ProcHandle {
    /// SIGKILLs the process; the death of an intermediate takes its PID 1
    /// (parent-death signal), and that of a PID 1 its whole namespace. Safe
    /// at any time: a pidfd never names a recycled process.
    pub(crate) fn kill(&self) {
        // Without pidfds (Linux < 5.3) only the owner of the `Child` can kill,
        // by PID, before reaping it (see `kill_group`) or by dropping it.
        if let Some(fd) = &self.pidfd {
            pidfd_kill(fd);
        }
    }

    /// SIGKILLs the intermediate's process group (the intermediate, PID 1 of
    /// the namespace and whatever stayed in its group) and the intermediate.
    /// Only the owner of the `Child` may call this, before reaping it: until
    /// then the PID (which is the group id) cannot be recycled. A process
    /// the spawner started is killed by its pidfd.
    pub(crate) fn kill_group(&self) {
        if !self.parent {
            self.kill();
            return;
        }
        // SAFETY: plain kill(2) on a process group we created.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
            libc::kill(self.pid, libc::SIGKILL);
        }
    }
}

/// Live processes of one sandbox, for kill-everything.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    next: AtomicU64,
    live: Mutex<HashMap<u64, Arc<ProcHandle>>>,
}

impl Registry {
    fn add(self: &Arc<Self>, handle: Arc<ProcHandle>) -> Registration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, handle);
        Registration {
            registry: self.clone(),
            id,
        }
    }

    /// Kills every registered process (synchronously).
    pub(crate) fn kill_all(&self) {
        for handle in self.live.lock().unwrap_or_else(|e| e.into_inner()).values() {
            handle.kill();
        }
    }

    /// Kills every registered process and waits, at most `limit`, until each
    /// intermediate has died: then every PID 1 has its death signal.
    pub(crate) fn kill_all_and_wait(&self, limit: Duration) {
        let handles: Vec<Arc<ProcHandle>> = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        let deadline = std::time::Instant::now() + limit;
        for handle in handles {
            handle.kill();
            let Some(fd) = &handle.pidfd else { continue };
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let mut pfd = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one pidfd we own; readable once the process exited.
            unsafe { libc::poll(&mut pfd, 1, left.as_millis() as libc::c_int) };
        }
    }
}

/// Removes a process from its registry when dropped, and kills it: the
/// registration lives as long as someone waits for the process, so a
/// caller that gives up on a call (its future dropped) ends what it
/// started. A process that already ended is not hurt: its pidfd names it
/// alone.
#[derive(Debug)]
pub(crate) struct Registration {
    registry: Arc<Registry>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let handle = self
            .registry
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        if let Some(handle) = handle {
            handle.kill();
        }
    }
}

/// What one sandboxed process needs beyond the sandbox-wide plan.
#[derive(Debug)]
pub(crate) struct Spec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub stdin: bool,
}

/// Sandbox-wide context for spawning.
#[derive(Debug)]
pub(crate) struct Context {
    pub plan: Arc<Plan>,
    pub grant: FsGrant,
    pub registry: Arc<Registry>,
    /// The session's spawner, which starts processes for the host.
    pub spawner: spawner::Slot,
}

/// A spawned process and its pipes.
#[derive(Debug)]
pub(crate) struct Running {
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    pub exit: Exit,
    pub handle: Arc<ProcHandle>,
    pub registration: Registration,
}

/// How the host learns that a process ended.
#[derive(Debug)]
pub(crate) enum Exit {
    /// The host started it and waits for it itself.
    Child(tokio::process::Child),
    /// The spawner started it and reports its raw wait status; kept once
    /// known, so it can be asked again.
    Reported {
        status: oneshot::Receiver<i32>,
        known: Option<ExitStatus>,
    },
}

impl Exit {
    /// Waits until the process ended. A spawner that died first took its
    /// processes with it: that is reported as death by SIGKILL.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Exit::Child(child) => child.wait().await,
            Exit::Reported { status, known } => {
                if let Some(done) = known {
                    return Ok(*done);
                }
                let done = ExitStatus::from_raw((&mut *status).await.unwrap_or(libc::SIGKILL));
                *known = Some(done);
                Ok(done)
            }
        }
    }
}

/// Maps a spawn failure to the API's error.
fn spawn_error(program: &str, err: io::Error) -> ProcessError {
    if let Some((step, errno)) = child::decode(&err) {
        return ProcessError::Sandbox(format!("{} failed: {errno}", step.describe()));
    }
    if err.raw_os_error() == Some(libc::EAGAIN) {
        return ProcessError::Failed(format!(
            "cannot start {program}: the session already runs as many processes as its limit \
             allows; wait for some to end, or end a background job (KillShell)"
        ));
    }
    match err.kind() {
        io::ErrorKind::NotFound => ProcessError::NotFound(program.to_string()),
        io::ErrorKind::PermissionDenied => ProcessError::Failed(format!(
            "cannot execute {program}: permission denied (is it outside the sandbox's readable directories?)"
        )),
        _ => ProcessError::Failed(format!("cannot start {program}: {err}")),
    }
}

/// SIGKILLs the process `pidfd` names (never a recycled one).
pub(crate) fn pidfd_kill(pidfd: &OwnedFd) {
    // SAFETY: pidfd_send_signal on a pidfd the caller owns.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        );
    }
}

/// The pidfd of process `pid`, when the kernel has them (Linux 5.3+).
pub(crate) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open returns a new fd or -1; the fd is ours.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0u32) as i32;
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    }
}

/// The command that starts `spec` under `plan` with these standard
/// streams: the child enters its sandbox ([`child::enter`]) between fork
/// and exec. The host and the spawner both start processes with it.
pub(crate) fn command(
    plan: Arc<Plan>,
    spec: &Spec,
    ruleset_fd: RawFd,
    [stdin, stdout, stderr]: [Stdio; 3],
) -> Result<std::process::Command, ProcessError> {
    // Entered again inside the process's own root.
    let cwd = std::ffi::CString::new(spec.cwd.as_os_str().as_encoded_bytes()).map_err(|_| {
        ProcessError::Failed("the working directory's path holds a NUL byte".into())
    })?;
    let mut cmd = crate::launcher::confined(&spec.program);
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        // Its own process group, so a timeout can kill it as a whole, and
        // so the terminal's Ctrl-C goes to the host alone.
        .process_group(0);
    // SAFETY: `child::enter` is written for the forked child: no allocation,
    // async-signal-safe calls only, on data prepared here.
    unsafe {
        cmd.pre_exec(move || child::enter(&plan, ruleset_fd, &cwd));
    }
    Ok(cmd)
}

/// Starts one sandboxed process: through the session's spawner, or by the
/// host itself when there is none or the request does not fit a message.
pub(crate) fn spawn(ctx: &Context, spec: Spec) -> Result<Running, ProcessError> {
    if !spec.cwd.is_dir() {
        return Err(ProcessError::Failed(format!(
            "working directory {} does not exist",
            spec.cwd.display()
        )));
    }
    if let Some(spawner) = ctx.spawner.get(&ctx.plan, &ctx.grant) {
        match spawn_through(ctx, &spawner, &spec) {
            Ok(running) => return Ok(running),
            Err(NotStarted::Failed(e)) => return Err(spawn_error(&spec.program, e)),
            Err(NotStarted::Unreachable(e)) => {
                tracing::debug!("starting {} without the spawner: {e}", spec.program);
            }
        }
    }
    spawn_here(ctx, spec)
}

/// Asks the spawner to start `spec` with pipes for its streams.
fn spawn_through(
    ctx: &Context,
    spawner: &Arc<Spawner>,
    spec: &Spec,
) -> Result<Running, NotStarted> {
    let unreachable = NotStarted::Unreachable;
    let stdin = if spec.stdin {
        Some(crate::lifeline::pipe().map_err(unreachable)?)
    } else {
        None
    };
    let (out_r, out_w) = crate::lifeline::pipe().map_err(unreachable)?;
    let (err_r, err_w) = crate::lifeline::pipe().map_err(unreachable)?;
    let mut theirs = Vec::with_capacity(3);
    if let Some((r, _)) = &stdin {
        theirs.push(r.as_raw_fd());
    }
    theirs.extend([out_w.as_raw_fd(), err_w.as_raw_fd()]);
    let started = spawner.spawn(spec, &theirs)?;
    // Only the process holds its ends now: its output ends when it does.
    drop((out_w, err_w));
    let failed = |e: io::Error| NotStarted::Failed(e);
    let stdin = match stdin {
        Some((_, w)) => Some(ChildStdin::from_std(w.into()).map_err(failed)?),
        None => None,
    };
    let handle = Arc::new(ProcHandle {
        pid: started.pid,
        pidfd: Some(started.pidfd),
        parent: false,
        _spawner: Some(spawner.clone()),
    });
    let registration = ctx.registry.add(handle.clone());
    Ok(Running {
        stdin,
        stdout: Some(ChildStdout::from_std(out_r.into()).map_err(failed)?),
        stderr: Some(ChildStderr::from_std(err_r.into()).map_err(failed)?),
        exit: Exit::Reported {
            status: started.exit,
            known: None,
        },
        handle,
        registration,
    })
}

/// Starts `spec` from the host itself.
fn spawn_here(ctx: &Context, spec: Spec) -> Result<Running, ProcessError> {
    let ruleset = if ctx.plan.landlock {
        Some(landlock_rules::create(&ctx.grant).map_err(ProcessError::Sandbox)?)
    } else {
        None
    };
    let stdin = if spec.stdin {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    let cmd = command(
        ctx.plan.clone(),
        &spec,
        ruleset.as_ref().map_or(-1, |fd| fd.as_raw_fd()),
        [stdin, Stdio::piped(), Stdio::piped()],
    )?;
    let mut child = tokio::process::Command::from(cmd)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| spawn_error(&spec.program, e))?;
    drop(ruleset);
    let pid = child.id().map(|p| p as i32).unwrap_or(-1);
    let handle = Arc::new(ProcHandle {
        pid,
        pidfd: pidfd_open(pid),
        parent: true,
        _spawner: None,
    });
    let registration = ctx.registry.add(handle.clone());
    Ok(Running {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        exit: Exit::Child(child),
        handle,
        registration,
    })
}

/// Reads a pipe to its end into `buf`.
async fn drain(pipe: Option<impl AsyncRead + Unpin>, buf: &mut HeadTail) {
    let Some(mut pipe) = pipe else { return };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.push(&chunk[..n]),
        }
    }
}

/// Runs `waiting` (the process's end) while `reading` drains its pipes, then
/// gives the readers [`DRAIN_GRACE`] to finish.
pub(crate) async fn wait_and_drain<R: Future, W: Future>(reading: R, waiting: W) -> W::Output {
    tokio::pin!(reading);
    tokio::pin!(waiting);
    let mut read_all = false;
    let result = loop {
        tokio::select! {
            _ = &mut reading, if !read_all => read_all = true,
            result = &mut waiting => break result,
        }
    };
    if !read_all {
        let _ = tokio::time::timeout(DRAIN_GRACE, &mut reading).await;
    }
    result
}

/// Splits an exit status into (code, signal).
pub(crate) fn status_parts(status: &ExitStatus) -> (Option<i32>, Option<i32>) {
    (status.code(), status.signal())
}

/// Runs a spawned process to its end: feeds stdin, collects both streams
/// (each capped at `cap`), and kills everything on timeout.
pub(crate) async fn finish(
    running: Running,
    stdin: Option<Vec<u8>>,
    timeout: Option<Duration>,
    cap: usize,
) -> Result<Output, ProcessError> {
    let Running {
        stdin: stdin_pipe,
        stdout,
        stderr,
        mut exit,
        handle,
        registration,
    } = running;
    let mut out = HeadTail::new(cap);
    let mut err = HeadTail::new(cap);

    let feed = async move {
        if let (Some(mut pipe), Some(data)) = (stdin_pipe, stdin) {
            // A program that exits without reading gives EPIPE: not an error.
            let _ = pipe.write_all(&data).await;
        }
    };
    let wait = async {
        let waited = match timeout {
            Some(limit) => tokio::time::timeout(limit, exit.wait()).await.ok(),
            None => Some(exit.wait().await),
        };
        match waited {
            Some(status) => (status, false),
            None => {
                handle.kill_group();
                handle.kill();
                (exit.wait().await, true)
            }
        }
    };
    let reading = async { tokio::join!(drain(stdout, &mut out), drain(stderr, &mut err)) };
    let waiting = async { tokio::join!(wait, feed).0 };
    let (status, timed_out) = wait_and_drain(reading, waiting).await;
    drop(registration);
    let status =
        status.map_err(|e| ProcessError::Failed(format!("waiting for the process: {e}")))?;
    let (exit_code, signal) = status_parts(&status);
    let truncated = out.truncated() || err.truncated();
    Ok(Output {
        exit_code,
        signal,
        stdout: out.finish(),
        stderr: err.finish(),
        truncated,
        timed_out,
    })
}
