//! The code that runs between `fork` and `exec`.
//!
//! `std` forks a child (the *intermediate*) and calls [`enter`] in it. The
//! intermediate joins the session's network namespace (when it has one),
//! unshares the other namespaces, writes its uid/gid maps and forks
//! again: the *grandchild* becomes PID 1 of the new PID namespace, locks
//! itself down and returns to `std`, which execs the program. The intermediate
//! never returns: it waits for the grandchild and exits with its status.
//!
//! Why an intermediate: `PR_SET_PDEATHSIG` fires when the *thread* that forked
//! exits, and tokio's threads come and go; the intermediate is single-threaded
//! and lives exactly as long as the command. It also watches the host's
//! lifeline pipe, so the sandbox dies with the host.
//!
//! Rules for this module and its files: async-signal-safe calls only, no
//! allocation, no locks. Errors travel back through `std`'s exec-error pipe as a raw OS error that
//! encodes the failed [`Step`] and the errno ([`decode`] reads it).
//!
//! Its files: [`step`] names the steps and encodes their errors,
//! [`grandchild`] locks PID 1 down, [`own_root`] builds its root, and
//! [`intermediate`] relays its fate; the system-call helpers that keep
//! errno are the crate's [`crate::after_fork`] (the session's network
//! namespace is made with them too).

mod cloned;
mod grandchild;
mod intermediate;
mod own_root;
mod step;

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

use libc::c_int;

use crate::after_fork::{errno, write_file};
use crate::plan::Plan;
pub(crate) use cloned::{Program, start_cloned};
pub(crate) use step::decode;
use step::{Step, fail};

/// Maps the caller's ids to themselves in the user namespace this process
/// just made.
unsafe fn write_id_maps(plan: &Plan) -> io::Result<()> {
    // SAFETY: see `enter`.
    unsafe {
        // setgroups must be denied before an unprivileged gid_map write.
        if !write_file(c"/proc/self/setgroups", b"deny") {
            return Err(fail(Step::Setgroups));
        }
        if !write_file(c"/proc/self/uid_map", &plan.uid_map) {
            return Err(fail(Step::UidMap));
        }
        if !write_file(c"/proc/self/gid_map", &plan.gid_map) {
            return Err(fail(Step::GidMap));
        }
        Ok(())
    }
}

/// Entry point in the intermediate process (see the module docs). Returns
/// only in the grandchild, ready for `exec`; `ruleset` is the per-process
/// Landlock ruleset fd, or -1; `cwd` is the working directory, entered
/// again inside the sandbox's own root.
///
/// # Safety
/// Must be called in a freshly forked child, as a `pre_exec` closure.
pub(crate) unsafe fn enter(plan: &Plan, ruleset: RawFd, cwd: &CStr) -> io::Result<()> {
    // SAFETY: we are the single thread of a forked child; every call below is
    // async-signal-safe and touches only memory prepared by the parent.
    unsafe {
        // With the host's credentials still: the session's limits on
        // processes and memory cover all that follows.
        for procs in &plan.cgroup_procs {
            if !write_file(procs, b"0") {
                return Err(fail(Step::Cgroup));
            }
        }
        // The session's network namespace, through its user namespace (which
        // owns it); the new user namespace below is nested in that one.
        if let Some((user, net)) = plan.shared_net_fds()
            && (libc::setns(user, libc::CLONE_NEWUSER) != 0
                || libc::setns(net, libc::CLONE_NEWNET) != 0)
        {
            return Err(fail(Step::JoinNet));
        }
        if plan.unshare_flags != 0 && libc::unshare(plan.unshare_flags) != 0 {
            return Err(fail(Step::Unshare));
        }
        if plan.user_ns {
            write_id_maps(plan)?;
        }
        // The guard pipe lets the grandchild notice an intermediate that died
        // before PR_SET_PDEATHSIG was set (getppid() is 0 for a PID 1, so the
        // usual check does not work).
        let mut guard = [-1 as c_int; 2];
        if libc::pipe2(guard.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(fail(Step::GuardPipe));
        }
        match libc::fork() {
            // The session's process limit: said as such by `exec`.
            -1 if errno() == libc::EAGAIN => Err(io::Error::from_raw_os_error(libc::EAGAIN)),
            -1 => Err(fail(Step::Fork)),
            0 => {
                libc::close(guard[1]);
                grandchild::run(plan, ruleset, guard[0], cwd)
            }
            pid => {
                libc::close(guard[0]);
                intermediate::run(plan, pid, guard[1])
            }
        }
    }
}
