//! The session's spawner: a small process that starts the sandbox's
//! processes for the host.
//!
//! Why: a process is started by forking, and forking the host is what a
//! command cost most. The host is large (a wasm engine, compiled plugins,
//! a runtime's threads): each fork copied its page tables, each exit tore
//! the copy down, and the host paid copy-on-write faults afterwards; on top
//! of that, every process joined the session's control groups by writing
//! `cgroup.procs`, which waits for an RCU grace period (up to 10 ms on a
//! two-core machine). The spawner is Kaizen's own binary started afresh
//! ([`server`]): a few MiB, single-threaded, already in the session's
//! control groups. Its forks are cheap and its children are counted with
//! the session from birth.
//!
//! What a process gets does not change: the spawner runs the same plan
//! through the same code between fork and exec ([`crate::child`]). The
//! host keeps what it had: a pidfd per process to kill it (even from
//! `Drop`), the pipes of its standard streams, and its exit status, which
//! the spawner reports. The spawner dies with its host (end of stream on
//! its socket) and its processes die with it (their intermediates watch
//! its lifeline pipe).
//!
//! When no spawner can be started (no `/proc/self/exe`, a binary without
//! [`server::ENTRY`]), or a request is too large for one message, the
//! host starts the process itself, as before: slower, never less
//! contained.

mod fingerprint;
mod server;
mod socket;
mod wire;
mod zygote;

use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};

use tokio::sync::oneshot;

use crate::exec::Spec;
use crate::landlock_rules::FsGrant;
use crate::plan::Plan;
use fingerprint::Fingerprint;
use wire::{Kind, Reader, Writer};

/// Starts after which a sandbox stops trying and starts its processes
/// itself.
const MAX_STARTS: u32 = 3;

/// A process the spawner started.
#[derive(Debug)]
pub(crate) struct Started {
    pub pid: i32,
    pub pidfd: OwnedFd,
    /// Its raw wait status, once it ended; closed without a value if the
    /// spawner died first (its processes died with it).
    pub exit: oneshot::Receiver<i32>,
}

/// Why the spawner did not start a process.
#[derive(Debug)]
pub(crate) enum NotStarted {
    /// The request never reached the spawner: the host may start the
    /// process itself.
    Unreachable(io::Error),
    /// The process could not be started, or the spawner was lost while it
    /// tried (the process may have run: it must not be started again).
    Failed(io::Error),
}

/// The answer to one request: the PID and pidfd of what started.
type StartReply = Result<(i32, OwnedFd), NotStarted>;

/// What the reader thread hands to the callers waiting on it.
#[derive(Debug, Default)]
struct Waiting {
    /// Set once the spawner took the plan: from then on a request may have
    /// started a process, and a lost spawner fails it rather than leaving
    /// it to the host.
    ready: bool,
    /// Set once the spawner is gone: no request may wait any more.
    closed: bool,
    started: HashMap<u64, mpsc::SyncSender<StartReply>>,
    exited: HashMap<u64, oneshot::Sender<i32>>,
}

/// The host's side of one spawner.
#[derive(Debug)]
pub(crate) struct Spawner {
    sock: Arc<OwnedFd>,
    waiting: Arc<Mutex<Waiting>>,
    next: AtomicU64,
    /// Closed once the reader thread has reaped the spawner.
    reaped: Mutex<mpsc::Receiver<()>>,
}

fn lock(waiting: &Mutex<Waiting>) -> MutexGuard<'_, Waiting> {
    waiting.lock().unwrap_or_else(|e| e.into_inner())
}

impl Spawner {
    /// Starts a spawner and has it join the session's control groups
    /// (`cgroup_procs`), which takes a while: it serves once it has the
    /// plan ([`Spawner::init`]); requests sent meanwhile wait.
    pub(crate) fn launch(cgroup_procs: &[CString]) -> io::Result<Spawner> {
        // Keeps the entry point in the binary (see `server`).
        std::hint::black_box(&server::ENTRY);
        let (ours, theirs) = socket::pair()?;
        let mut child = launch(&theirs)?;
        drop(theirs);
        let mut w = Writer::new(Kind::Join, 0);
        wire::put_join(&mut w, cgroup_procs);
        if let Err(e) = socket::send(ours.as_fd(), &w.finish(), &[]) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        let sock = Arc::new(ours);
        let waiting = Arc::new(Mutex::new(Waiting::default()));
        let (reader_sock, reader_waiting) = (sock.clone(), waiting.clone());
        let (reaped_tx, reaped) = mpsc::channel();
        // If the thread cannot start, the closure (and the child in it) is
        // dropped: the spawner sees its socket close and ends.
        std::thread::Builder::new()
            .name("kaizen-spawner".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                read_replies(&reader_sock, &reader_waiting, child);
                drop(reaped_tx);
            })?;
        Ok(Spawner {
            sock,
            waiting,
            next: AtomicU64::new(1),
            reaped: Mutex::new(reaped),
        })
    }

    /// Gives the spawner its plan and grant.
    pub(crate) fn init(&self, plan: &Plan, grant: &FsGrant) -> io::Result<()> {
        let mut w = Writer::new(Kind::Init, 0);
        wire::put_init(&mut w, plan, grant);
        socket::send(self.sock.as_fd(), &w.finish(), &[])
    }

    /// [`Spawner::launch`] then [`Spawner::init`].
    pub(crate) fn start(plan: &Plan, grant: &FsGrant) -> io::Result<Spawner> {
        let spawner = Spawner::launch(&plan.cgroup_procs)?;
        spawner.init(plan, grant)?;
        Ok(spawner)
    }

    /// Whether the spawner still serves.
    pub(crate) fn alive(&self) -> bool {
        !lock(&self.waiting).closed
    }

    /// Asks the spawner to start `spec` with `stdio` (stdin when piped,
    /// stdout, stderr) and waits until it started.
    pub(crate) fn spawn(&self, spec: &Spec, stdio: &[RawFd]) -> Result<Started, NotStarted> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (started_tx, started_rx) = mpsc::sync_channel(1);
        let (exit_tx, exit_rx) = oneshot::channel();
        {
            let mut waiting = lock(&self.waiting);
            if waiting.closed {
                return Err(NotStarted::Unreachable(io::Error::other(
                    "the sandbox's spawner has ended",
                )));
            }
            waiting.started.insert(id, started_tx);
            waiting.exited.insert(id, exit_tx);
        }
        let mut w = Writer::new(Kind::Spawn, id);
        wire::put_spec(&mut w, spec);
        if let Err(e) = socket::send(self.sock.as_fd(), &w.finish(), stdio) {
            let mut waiting = lock(&self.waiting);
            waiting.started.remove(&id);
            waiting.exited.remove(&id);
            return Err(NotStarted::Unreachable(e));
        }
        match started_rx.recv() {
            Ok(Ok((pid, pidfd))) => Ok(Started {
                pid,
                pidfd,
                exit: exit_rx,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(NotStarted::Failed(io::Error::other(
                "the sandbox's spawner ended while it started the process",
            ))),
        }
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        // The reader thread sees the end of stream and reaps the spawner,
        // which ends with everything it started. Waited for (briefly) so
        // that a host about to exit has reaped the whole tree: its own
        // accounting of CPU time then includes the session's commands.
        // SAFETY: shutdown on a socket we own.
        unsafe { libc::shutdown(self.sock.as_raw_fd(), libc::SHUT_RDWR) };
        let reaped = self.reaped.lock().unwrap_or_else(|e| e.into_inner());
        let _ = reaped.recv_timeout(REAP_GRACE);
    }
}

/// Starts the spawner process: this binary again, with the marker
/// arguments, `sock` as fd [`server::FD`], nothing of our environment, and
/// no standard streams.
fn launch(sock: &OwnedFd) -> io::Result<Child> {
    let mut cmd = crate::launcher::spawner("/proc/self/exe");
    cmd.arg0(OsStr::from_bytes(server::ARG0.to_bytes()))
        .arg(OsStr::from_bytes(server::FLAG.to_bytes()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let fd = sock.as_raw_fd();
    // SAFETY: dup2 and fcntl only, in the forked child.
    unsafe {
        cmd.pre_exec(move || {
            let rc = if fd == server::FD {
                libc::fcntl(fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, server::FD)
            };
            if rc < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// The reader thread: hands each answer to its waiting caller until the
/// spawner or the host hangs up, then reaps the spawner.
fn read_replies(sock: &OwnedFd, waiting: &Mutex<Waiting>, mut child: Child) {
    let mut inbox = socket::Inbox::new();
    while let Ok(Some(mut fds)) = socket::recv(sock.as_fd(), &mut inbox) {
        let Ok((kind, id, mut r)) = Reader::open(inbox.message()) else {
            break;
        };
        let mut waiting = lock(waiting);
        match kind {
            Kind::Ready => waiting.ready = true,
            Kind::InitFailed => {
                let why = String::from_utf8_lossy(r.bytes().unwrap_or(b"?")).into_owned();
                tracing::debug!("the sandbox's spawner could not start: {why}");
                break;
            }
            Kind::Started => {
                let (Ok(pid), Some(pidfd)) = (r.i32(), fds.pop()) else {
                    break;
                };
                if let Some(tx) = waiting.started.remove(&id) {
                    let _ = tx.send(Ok((pid, pidfd)));
                }
            }
            Kind::Failed => {
                let raw = r.i32().unwrap_or(-1);
                let message = String::from_utf8_lossy(r.bytes().unwrap_or(b"?")).into_owned();
                let err = if raw >= 0 {
                    io::Error::from_raw_os_error(raw)
                } else {
                    io::Error::other(message)
                };
                waiting.exited.remove(&id);
                if let Some(tx) = waiting.started.remove(&id) {
                    let _ = tx.send(Err(NotStarted::Failed(err)));
                }
            }
            Kind::Exited => {
                if let (Ok(status), Some(tx)) = (r.i32(), waiting.exited.remove(&id)) {
                    let _ = tx.send(status);
                }
            }
            _ => break,
        }
    }
    {
        // Every caller still waiting learns that the spawner is gone: a
        // spawner that never took the plan started nothing, so the host
        // may start those processes itself.
        let mut waiting = lock(waiting);
        waiting.closed = true;
        let ready = waiting.ready;
        for (_, tx) in waiting.started.drain() {
            let _ = tx.send(Err(if ready {
                NotStarted::Failed(io::Error::other(
                    "the sandbox's spawner ended while it started the process",
                ))
            } else {
                NotStarted::Unreachable(io::Error::other(
                    "the sandbox's spawner ended before it took the plan",
                ))
            }));
        }
        waiting.exited.clear();
    }
    // SAFETY: shutdown on a socket we share; later requests fail at once.
    unsafe { libc::shutdown(sock.as_raw_fd(), libc::SHUT_RDWR) };
    // A spawner that saw the end of stream ends on its own, once what it
    // started has ended (so each process is reaped by its parent, and its
    // CPU time is counted up to the host); one that does not is killed.
    if let Some(pidfd) = crate::exec::pidfd_open(child.id() as i32) {
        let mut pfd = libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one pidfd we own; readable once the process ended.
        unsafe { libc::poll(&mut pfd, 1, REAP_GRACE.as_millis() as libc::c_int) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// How long a spawner may take to end after its host hung up.
const REAP_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// A sandbox's spawner, started at its first process, started again (a
/// few times) if it dies, and retired when what its root was built from
/// changed on the host (see `fingerprint.rs`).
#[derive(Debug, Default)]
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    /// The paths whose change retires the spawner.
    watched: Arc<[PathBuf]>,
}

#[derive(Debug, Default)]
struct SlotState {
    spawner: Option<(Arc<Spawner>, Fingerprint)>,
    starts: u32,
}

impl Slot {
    /// A slot holding a spawner launched ahead, if there is one, watching
    /// `watched` (the paths the sandbox's root binds, protects, hides or
    /// denies).
    pub(crate) fn with(spawner: Option<Spawner>, watched: Vec<PathBuf>) -> Slot {
        let watched: Arc<[PathBuf]> = watched.into();
        Slot {
            state: Mutex::new(SlotState {
                starts: spawner.is_some() as u32,
                spawner: spawner.map(|s| (Arc::new(s), Fingerprint::take(watched.clone()))),
            }),
            watched,
        }
    }

    /// The running spawner, started if need be; `None` when this sandbox
    /// starts its processes itself.
    pub(crate) fn get(&self, plan: &Plan, grant: &FsGrant) -> Option<Arc<Spawner>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut retiring = false;
        if let Some((spawner, print)) = &state.spawner {
            if spawner.alive() {
                let Some(path) = print.changed() else {
                    return Some(spawner.clone());
                };
                tracing::info!(
                    "{} changed on the host: the sandbox builds its root again",
                    path.display()
                );
                retiring = true;
            }
            // Its running processes keep it until they end.
            state.spawner = None;
        }
        // A retired spawner did nothing wrong: it does not count.
        if !retiring {
            if state.starts >= MAX_STARTS {
                return None;
            }
            state.starts += 1;
        }
        let print = Fingerprint::take(self.watched.clone());
        match Spawner::start(plan, grant) {
            Ok(spawner) => {
                let spawner = Arc::new(spawner);
                state.spawner = Some((spawner.clone(), print));
                Some(spawner)
            }
            Err(e) => {
                tracing::debug!(
                    "the sandbox starts its processes itself (slower): no spawner: {e}"
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            program: "true".into(),
            args: Vec::new(),
            cwd: "/".into(),
            env: Vec::new(),
            stdin: false,
        }
    }

    /// A spawner that never took its plan started nothing: what was asked
    /// of it is left to the host, not reported as a failure.
    #[test]
    fn requests_to_a_spawner_that_refused_its_plan_are_left_to_the_host() {
        let spawner = Spawner::launch(&[]).unwrap();
        socket::send(spawner.sock.as_fd(), b"not a plan", &[]).unwrap();
        let (_r, w) = crate::lifeline::pipe().unwrap();
        let fds = [w.as_raw_fd(), w.as_raw_fd()];
        match spawner.spawn(&spec(), &fds) {
            Err(NotStarted::Unreachable(_)) => {}
            other => panic!("expected the request to be left to the host: {other:?}"),
        }
        assert!(!spawner.alive());
    }

    #[test]
    fn a_control_group_that_cannot_be_joined_stops_the_spawner_before_it_serves() {
        let missing = CString::new("/nonexistent/kaizen/cgroup.procs").unwrap();
        let spawner = Spawner::launch(&[missing]).unwrap();
        let (_r, w) = crate::lifeline::pipe().unwrap();
        let fds = [w.as_raw_fd(), w.as_raw_fd()];
        let plan = Plan::new(
            &Default::default(),
            Vec::new(),
            -1,
            &crate::root::RootSpec::default(),
        );
        let grant = FsGrant {
            read: Vec::new(),
            write: Vec::new(),
            network: true,
        };
        // The spawner may be gone before the plan is sent.
        let _ = spawner.init(&plan, &grant);
        assert!(matches!(
            spawner.spawn(&spec(), &fds),
            Err(NotStarted::Unreachable(_))
        ));
    }
}
