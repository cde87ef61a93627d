//! The intermediate process: the host's forked child that created the
//! namespaces and forked their PID 1 (see [`crate::child`]). It stays
//! single-threaded and alive exactly as long as the command, which is what
//! makes PID 1's parent-death signal reliable, and:
//! - exits the way PID 1 did (code, or the same signal), so the host sees
//!   the command's real status;
//! - kills PID 1, and with it the namespace, when the host's lifeline pipe
//!   reports the host gone.
//!
//! Same rules as the child: async-signal-safe calls only, no allocation.

use std::ptr;

use libc::{c_int, c_uint};

use crate::after_fork::errno;
use crate::plan::Plan;

/// The intermediate: relay the grandchild's fate, or kill it when the host
/// is gone. Never returns.
pub(super) unsafe fn run(plan: &Plan, child: libc::pid_t, guard: c_int) -> ! {
    // SAFETY: see `super::enter`: single-threaded forked child.
    unsafe {
        // Signals could only interrupt us; SIGKILL still works.
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, ptr::null_mut());

        let pidfd = libc::syscall(libc::SYS_pidfd_open, child, 0 as c_uint) as c_int;
        // Above all std's exec-error pipe: while we hold it, spawn() in the
        // host would block until the command ends. Also the output pipes and
        // the lifeline's write end.
        close_all_except([plan.lifeline, guard, pidfd]);

        loop {
            let mut fds = [
                libc::pollfd {
                    fd: pidfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: plan.lifeline,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // Without pidfds (Linux < 5.3) fall back to polling waitpid.
            let timeout = if pidfd < 0 { 50 } else { -1 };
            if libc::poll(fds.as_mut_ptr(), 2, timeout) < 0 && errno() != libc::EINTR {
                libc::kill(child, libc::SIGKILL);
            }
            let host_gone = fds[1].revents != 0;
            if host_gone {
                libc::kill(child, libc::SIGKILL);
            }
            let flags = if host_gone || fds[0].revents != 0 {
                0
            } else {
                libc::WNOHANG
            };
            let mut status = 0;
            let rc = libc::waitpid(child, &mut status, flags);
            if rc == child {
                relay(status);
            }
            if rc < 0 && errno() != libc::EINTR {
                libc::_exit(127);
            }
        }
    }
}

/// Exits the way the grandchild did, so the host sees its code or signal.
unsafe fn relay(status: c_int) -> ! {
    // SAFETY: see `super::enter`: single-threaded forked child.
    unsafe {
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            // Die of the same signal, without dumping our own core.
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(127)
    }
}

/// Closes every fd but the (up to three) given ones; negative ones are skipped.
unsafe fn close_all_except(mut keep: [c_int; 3]) {
    keep.sort_unstable();
    let mut next: c_uint = 0;
    // SAFETY: see `super::enter`: single-threaded forked child.
    unsafe {
        for fd in keep {
            if fd < 0 {
                continue;
            }
            let fd = fd as c_uint;
            if fd > next {
                close_range(next, fd - 1);
            }
            next = fd + 1;
        }
        close_range(next, c_uint::MAX);
    }
}

unsafe fn close_range(first: c_uint, last: c_uint) {
    // SAFETY: see `super::enter`: single-threaded forked child.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, last, 0 as c_uint) != 0 {
            // Linux < 5.9: one by one, up to a sane bound.
            for fd in first..=last.min(65_535) {
                libc::close(fd as c_int);
            }
        }
    }
}
