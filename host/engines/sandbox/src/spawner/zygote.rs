//! The warm sandbox: a resident process that holds the session's
//! namespaces and root, and starts every command from inside them.
//!
//! Why: a command used to build everything itself — a user, PID, mount,
//! IPC and UTS namespace, a copy of the host's mount table, a root of its
//! own out of some fifty mounts, and the teardown of it all when it ended
//! — and that was most of what a command cost once the spawner had made
//! forking cheap. The resident process does it once per session: it is
//! PID 1 of the session's namespaces, in its root, with the root's covers
//! of protected, hidden and secret paths in place.
//!
//! What a command gets does not change. Each is still PID 1 of new user,
//! PID, mount and IPC namespaces, now nested in the resident's and cloned
//! by it directly (`child/cloned.rs`): its mount namespace is a copy of the resident's
//! (locked: it cannot undo the covers), in which it gets a fresh `/tmp`,
//! `/dev/shm` and `/proc` ([`crate::refresh`]); then the same limits,
//! Landlock domain (a ruleset of its own) and seccomp filters as before.
//! What two calls share is what they shared before: the network namespace
//! and the session's private directory; now also the UTS namespace (a
//! hostname no command can change).
//!
//! How it starts: once the spawner has its plan, it forks; the child
//! becomes the resident's intermediate ([`crate::child::enter`], exactly as
//! for a command) and its child, the resident, builds the root and, instead
//! of exec, serves the host's socket. The spawner closes its own end and
//! only waits: if anything fails before the resident serves, the spawner
//! serves as before (cold). The resident dies when the host hangs up, when
//! the spawner dies (its intermediate watches the spawner's lifeline), and
//! takes every command with it (it is PID 1 of all their namespaces).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;

use crate::landlock_rules::FsGrant;
use crate::plan::Plan;

/// How the spawner goes on after trying to start a resident process.
pub(super) enum Outcome {
    /// The resident serves the host: the spawner only waits for this
    /// process (the resident's intermediate) and ends with it.
    Handed(libc::pid_t),
    /// The spawner serves the host itself (cold).
    Cold,
}

/// Starts the resident process for `plan` when the plan can be served
/// warm. `spawner_lifeline` is the write end of the spawner's lifeline,
/// which the resident must not keep. Returns in the spawner; in the
/// resident it serves the host on `sock` and never returns.
pub(super) fn start(
    sock: BorrowedFd<'_>,
    plan: &mut Plan,
    grant: &FsGrant,
    spawner_lifeline: RawFd,
) -> Outcome {
    let Some(commands) = plan.for_warm_commands() else {
        return Outcome::Cold;
    };
    let Ok((ready_r, ready_w)) = crate::lifeline::pipe() else {
        return Outcome::Cold;
    };
    plan.zygote = true;
    // SAFETY: the spawner is single-threaded, so its child may allocate;
    // it runs `child::enter` as any freshly forked child does.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(ready_r);
        // SAFETY: closes the child's copy of an fd it must not keep: the
        // spawner's death must be seen by the resident's intermediate.
        unsafe { libc::close(spawner_lifeline) };
        // SAFETY: a freshly forked child, as `enter` requires. Only the
        // resident returns from it (or a child that failed).
        let code = match unsafe { crate::child::enter(plan, -1, c"/") } {
            Ok(()) => match resident(sock, commands, grant, ready_w) {
                Ok(()) => 0,
                Err(_) => 1,
            },
            Err(_) => 1,
        };
        // SAFETY: ends the child without returning into the spawner's code.
        unsafe { libc::_exit(code) };
    }
    plan.zygote = false;
    drop(ready_w);
    if pid < 0 {
        return Outcome::Cold;
    }
    let mut byte = [0u8];
    // SAFETY: read into a one-byte buffer of ours.
    let n = unsafe { libc::read(ready_r.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
    if n == 1 {
        return Outcome::Handed(pid);
    }
    // The intermediate exits the way the resident did: a failed step of
    // `child::enter` is all it can tell.
    let status = super::server::wait(pid);
    tracing::debug!("the sandbox runs cold: no resident process (wait status {status:#x})");
    Outcome::Cold
}

/// The resident's life: a word to the spawner that it serves, then the
/// host's requests until the host hangs up.
fn resident(
    sock: BorrowedFd<'_>,
    commands: Plan,
    grant: &FsGrant,
    ready: OwnedFd,
) -> io::Result<()> {
    // SAFETY: one byte from a buffer of ours.
    if unsafe { libc::write(ready.as_raw_fd(), b"1".as_ptr().cast(), 1) } != 1 {
        return Err(io::Error::last_os_error());
    }
    drop(ready);
    super::server::serve_requests(sock, &Arc::new(commands), grant)
}
