//! The spawner process: Kaizen's own binary, started again with a marker
//! argument, serving one [`crate::Sandbox`].
//!
//! It joins the session's control groups once, takes the plan once, then
//! starts each process the host asks for exactly as the host would (the
//! same [`crate::child`] code between fork and exec), reports its PID with
//! a pidfd, and reports its exit status when it ends. It runs no program
//! itself and touches nothing but the plan's files.
//!
//! It enters through an `.init_array` function, before `main`, so any
//! binary that links this crate can be a spawner (Kaizen, and every test
//! and bench that makes a [`crate::Sandbox`]); the function returns at once
//! unless argv is exactly [`ARG0`] [`FLAG`] and fd [`FD`] is a
//! `SOCK_SEQPACKET` socket. A binary without it would reject the flag and
//! exit, and the host falls back to starting processes itself.

use std::collections::HashMap;
use std::ffi::{CStr, OsStr, c_char};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use libc::c_int;

use super::socket;
use super::wire::{self, Kind, Malformed, Reader, Writer};
use super::zygote;
use crate::exec::{self, Spec};
use crate::landlock_rules::{self, FsGrant};
use crate::plan::Plan;
use crate::shared_net::SharedNet;

/// The spawner's `argv[0]`.
pub(crate) const ARG0: &CStr = c"kaizen-sandbox-spawner";
/// The spawner's one argument: a program that does not know it refuses it.
pub(crate) const FLAG: &CStr = c"--kaizen-sandbox-spawner";
/// Where the spawner finds its end of the socket.
pub(crate) const FD: RawFd = 3;

/// Runs before `main` in every process of a binary that links this crate.
/// [`super::Spawner::start`] names it, so the linker keeps it.
#[used]
#[unsafe(link_section = ".init_array")]
pub(crate) static ENTRY: extern "C" fn(c_int, *const *const c_char, *const *const c_char) = entry;

extern "C" fn entry(argc: c_int, argv: *const *const c_char, _envp: *const *const c_char) {
    if argc != 2 || argv.is_null() {
        return;
    }
    // SAFETY: the loader passes argc valid, NUL-terminated arguments.
    let ours = unsafe { CStr::from_ptr(*argv) == ARG0 && CStr::from_ptr(*argv.add(1)) == FLAG };
    if !ours || !socket::is_seqpacket(FD) {
        return;
    }
    // SAFETY: fd 3 is the socket the host passed; nothing else owns it.
    // Close-on-exec again (dup2 cleared it): no program may inherit it.
    let sock = unsafe {
        libc::fcntl(FD, libc::F_SETFD, libc::FD_CLOEXEC);
        OwnedFd::from_raw_fd(FD)
    };
    let code = match serve(sock) {
        Ok(()) => 0,
        Err(_) => 1,
    };
    // SAFETY: ends this process without running `main`.
    unsafe { libc::_exit(code) }
}

/// A process this spawner started and has not reaped.
struct Live {
    pid: libc::pid_t,
    pidfd: OwnedFd,
}

/// The spawner's life: the control groups, the plan, then requests until
/// the host hangs up, served by a resident process when the plan allows
/// (see `zygote.rs`), else by the spawner itself.
fn serve(sock: OwnedFd) -> io::Result<()> {
    let mut inbox = socket::Inbox::new();
    // The session's control groups come first, so that joining them (which
    // waits for the kernel's RCU grace period, milliseconds) overlaps the
    // host's own preparation of the plan.
    let Some(_) = socket::recv(sock.as_fd(), &mut inbox)? else {
        return Ok(());
    };
    let joined = join(inbox.message());
    let Some(_) = socket::recv(sock.as_fd(), &mut inbox)? else {
        return Ok(());
    };
    // The spawner's own lifeline: its processes' intermediates watch the
    // read end, and the write end closes when the spawner ends, however.
    let (lifeline, lifeline_write) = crate::lifeline::pipe()?;
    let taken = joined.and_then(|()| take_init(inbox.message(), lifeline.as_raw_fd()));
    let (mut plan, grant) = match taken {
        Ok(taken) => taken,
        Err(why) => {
            let mut w = Writer::new(Kind::InitFailed, 0);
            w.bytes(why.as_bytes());
            return socket::send(sock.as_fd(), &w.finish(), &[]);
        }
    };
    socket::send(sock.as_fd(), &Writer::new(Kind::Ready, 0).finish(), &[])?;
    match zygote::start(sock.as_fd(), &mut plan, &grant, lifeline_write.as_raw_fd()) {
        zygote::Outcome::Handed(pid) => {
            // The resident answers the host now; its death, or ours, ends
            // the other (the lifeline).
            drop(sock);
            wait(pid);
            Ok(())
        }
        zygote::Outcome::Cold => serve_requests(sock.as_fd(), &Arc::new(plan), &grant),
    }
}

/// Starts what the host asks for under `plan` until the host hangs up,
/// and reports each process's end. Every child that ends is reaped, ours
/// or not (a child's child left to us is reaped unreported).
pub(super) fn serve_requests(
    sock: BorrowedFd<'_>,
    plan: &Arc<Plan>,
    grant: &FsGrant,
) -> io::Result<()> {
    let mut inbox = socket::Inbox::new();
    let mut live: HashMap<u64, Live> = HashMap::new();
    'serve: loop {
        let ids: Vec<u64> = live.keys().copied().collect();
        let mut polled: Vec<libc::pollfd> = std::iter::once(sock.as_raw_fd())
            .chain(ids.iter().map(|id| live[id].pidfd.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: poll on a live array of pollfds.
        let rc = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, -1) };
        if rc < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break 'serve;
        }
        loop {
            let mut status = 0;
            // SAFETY: reaps any child of ours that ended, without waiting.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            let Some(id) = live.iter().find(|(_, l)| l.pid == pid).map(|(id, _)| *id) else {
                continue;
            };
            live.remove(&id);
            let mut w = Writer::new(Kind::Exited, id);
            w.i32(status);
            if socket::send(sock, &w.finish(), &[]).is_err() {
                // The host can no longer be told: it is gone.
                break 'serve;
            }
        }
        if polled[0].revents != 0 {
            match socket::recv(sock, &mut inbox) {
                Ok(Some(fds)) => {
                    if start(sock, plan, grant, inbox.message(), fds, &mut live).is_err() {
                        break 'serve;
                    }
                }
                // The host hung up (or died): so do we.
                Ok(None) | Err(_) => break 'serve,
            }
        }
    }
    // Each one's death takes its namespace with it: an intermediate's, by
    // its PID 1's parent-death signal (the lifeline would too); a PID 1's
    // (the resident's commands), by the end of its PID namespace.
    for (_, entry) in live {
        exec::pidfd_kill(&entry.pidfd);
        wait(entry.pid);
    }
    Ok(())
}

/// Waits for our child `pid` and returns its raw wait status.
pub(super) fn wait(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid || (rc < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted)
        {
            return status;
        }
    }
}

/// Joins the session's control groups, once here so that no process has
/// to join them again: its children are born in them.
fn join(msg: &[u8]) -> Result<(), String> {
    let (kind, _, mut r) = Reader::open(msg).map_err(|e| e.to_string())?;
    if kind != Kind::Join {
        return Err("the first message was not the control groups".into());
    }
    let procs = wire::get_join(&mut r).map_err(|e| e.to_string())?;
    r.end().map_err(|e| e.to_string())?;
    for procs in procs {
        let path = Path::new(OsStr::from_bytes(procs.as_bytes()));
        std::fs::write(path, b"0").map_err(|e| {
            format!(
                "joining the session's control group {}: {e}",
                path.display()
            )
        })?;
    }
    Ok(())
}

/// Takes up the plan, and makes the session's network namespace when the
/// plan wants one (see `shared_net.rs`).
fn take_init(msg: &[u8], lifeline: RawFd) -> Result<(Plan, FsGrant), String> {
    let (kind, _, mut r) = Reader::open(msg).map_err(|e| e.to_string())?;
    if kind != Kind::Init {
        return Err("the second message was not the plan".into());
    }
    let (mut plan, grant) = wire::get_init(&mut r, lifeline).map_err(|e| e.to_string())?;
    r.end().map_err(|e| e.to_string())?;
    if plan.unshare_flags & libc::CLONE_NEWNET != 0 {
        // Without it each process makes its own: as isolated, slower.
        if let Ok(net) = SharedNet::create(&plan.uid_map, &plan.gid_map)
            && net.joinable()
        {
            plan.share_network(net);
        }
    }
    Ok((plan, grant))
}

/// Starts the process one request asks for and answers it. Errs only when
/// the host can no longer be told.
fn start(
    sock: BorrowedFd<'_>,
    plan: &Arc<Plan>,
    grant: &FsGrant,
    msg: &[u8],
    fds: Vec<OwnedFd>,
    live: &mut HashMap<u64, Live>,
) -> io::Result<()> {
    let (id, result) = match Reader::open(msg) {
        Ok((Kind::Spawn, id, mut r)) => (id, spawn_one(plan, grant, &mut r, fds)),
        Ok((_, id, _)) => (id, Err(io::Error::other(Malformed("not a request")))),
        Err(e) => (0, Err(io::Error::other(e))),
    };
    match result {
        Ok(started) => {
            let mut w = Writer::new(Kind::Started, id);
            w.i32(started.pid);
            socket::send(sock, &w.finish(), &[started.pidfd.as_raw_fd()])?;
            live.insert(id, started);
        }
        Err(err) => {
            let mut w = Writer::new(Kind::Failed, id);
            w.i32(err.raw_os_error().unwrap_or(-1));
            w.bytes(err.to_string().as_bytes());
            socket::send(sock, &w.finish(), &[])?;
        }
    }
    Ok(())
}

/// Decodes one request and starts its process.
fn spawn_one(
    plan: &Arc<Plan>,
    grant: &FsGrant,
    r: &mut Reader,
    fds: Vec<OwnedFd>,
) -> io::Result<Live> {
    let mut spec: Spec = wire::get_spec(r).map_err(io::Error::other)?;
    let warm = plan
        .root
        .as_ref()
        .is_some_and(|root| root.refresh.is_some());
    // In a resident process's root, a directory outside the grant does not
    // exist: the process starts where it would in a root of its own.
    if let Some(root) = plan.root.as_ref().filter(|_| warm)
        && !spec.cwd.is_dir()
    {
        spec.cwd = Path::new(OsStr::from_bytes(root.fallback_cwd.as_bytes())).to_path_buf();
    }
    let mut fds = fds.into_iter();
    let stdin = if spec.stdin { fds.next() } else { None };
    let (Some(stdout), Some(stderr), None) = (fds.next(), fds.next(), fds.next()) else {
        return Err(io::Error::other("a request came without its streams"));
    };
    if spec.stdin && stdin.is_none() {
        return Err(io::Error::other("a request came without its stdin"));
    }
    let ruleset = if plan.landlock {
        Some(landlock_rules::create(grant).map_err(io::Error::other)?)
    } else {
        None
    };
    if warm {
        // The resident clones the command itself (see `child/cloned.rs`).
        let program = crate::child::Program::new(&spec)?;
        let stdin = match stdin {
            Some(fd) => fd,
            None => std::fs::File::open("/dev/null")?.into(),
        };
        let stdio = [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()];
        let ruleset_fd = ruleset.as_ref().map_or(-1, |fd| fd.as_raw_fd());
        let (pid, pidfd) = crate::child::start_cloned(plan, ruleset_fd, &program, stdio)?;
        // Our copies of its streams and ruleset close here: its output
        // ends when it does.
        return Ok(Live { pid, pidfd });
    }
    let stdin = stdin.map_or_else(Stdio::null, Stdio::from);
    let mut cmd = exec::command(
        plan.clone(),
        &spec,
        ruleset.as_ref().map_or(-1, |fd| fd.as_raw_fd()),
        [stdin, Stdio::from(stdout), Stdio::from(stderr)],
    )
    .map_err(io::Error::other)?;
    let child = cmd.spawn()?;
    // Our copies of its streams go now: its output ends when it does.
    drop(cmd);
    drop(ruleset);
    let pid = child.id() as libc::pid_t;
    // From here the process is reaped by pid (see `serve_requests`).
    drop(child);
    match exec::pidfd_open(pid) {
        Some(pidfd) => Ok(Live { pid, pidfd }),
        None => {
            // SAFETY: kill on our own child, not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            wait(pid);
            Err(io::Error::other(
                "this kernel has no pidfds (Linux 5.3 or later)",
            ))
        }
    }
}
