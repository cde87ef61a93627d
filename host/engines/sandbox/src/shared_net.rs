//! The session's own network namespace, made once per [`crate::Sandbox`]
//! and joined by each of its processes instead of a new one per process.
//!
//! Why: creating a network namespace costs 1.5 to 2.5 ms per process on a
//! two-core machine, and the kernel frees it asynchronously, competing with
//! the next command; joining one (`setns`) costs a few microseconds.
//!
//! What the processes share is nothing: the namespace has no interface but
//! a loopback that is down, and nobody can bring it up, since it belongs to
//! the session's user namespace and each process runs in a user namespace
//! of its own nested inside (with no capability over its parent's
//! objects). The one thing a network namespace holds besides interfaces is
//! the table of abstract unix sockets; Landlock (ABI 6) scopes those to
//! each process's own domain, and where it cannot, a session's processes
//! already share a writable workspace, where named sockets work anyway.
//! Other sessions have namespaces of their own.
//!
//! The namespaces are kept by file descriptors only: a short-lived child
//! makes them, the session's spawner ([`crate::spawner`]) opens them under
//! `/proc/<child>/ns` and kills the child. Processes the host starts
//! itself (when there is no spawner) each make their own.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::after_fork::write_file;

/// The session's user and network namespaces, held open.
#[derive(Debug)]
pub(crate) struct SharedNet {
    user: OwnedFd,
    net: OwnedFd,
}

impl SharedNet {
    /// Makes a user namespace that maps the caller's ids to themselves
    /// (`uid_map`, `gid_map`: the plan's lines) and an empty network
    /// namespace it owns.
    pub(crate) fn create(uid_map: &[u8], gid_map: &[u8]) -> io::Result<Self> {
        let mut ready = [-1; 2];
        // SAFETY: pipe2 fills the array with fds we own from here on.
        if unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the fds were just made and are owned by nobody else.
        let (ready_r, ready_w) = unsafe {
            (
                OwnedFd::from_raw_fd(ready[0]),
                OwnedFd::from_raw_fd(ready[1]),
            )
        };
        // SAFETY: getpid only reads; the child runs `make_namespaces` only:
        // async-signal-safe calls on memory prepared before the fork.
        let pid = unsafe {
            let parent = libc::getpid();
            let pid = libc::fork();
            if pid == 0 {
                make_namespaces(uid_map, gid_map, ready_w.as_raw_fd(), parent);
            }
            pid
        };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        drop(ready_w);
        let opened = wait_ready(&ready_r).and_then(|()| {
            Ok(SharedNet {
                user: open_ns(pid, "user")?,
                net: open_ns(pid, "net")?,
            })
        });
        // The namespaces live on in the fds. Killed rather than told to
        // exit: a pipe's end of ours that a child forked meanwhile by
        // another thread still holds would hold up such a message.
        let mut status = 0;
        // SAFETY: kill and waitpid on our own, not yet reaped, child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
        opened
    }

    /// Whether a process can join the namespaces and make its own user
    /// namespace inside, as every command does: a kernel or a security
    /// module may refuse a nested user namespace, and then commands must
    /// each make their own network namespace instead of failing.
    pub(crate) fn joinable(&self) -> bool {
        let (user, net) = (self.user_fd(), self.net_fd());
        // SAFETY: the child makes only async-signal-safe calls on fds
        // opened before the fork, then exits; we reap it.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let joined = libc::setns(user, libc::CLONE_NEWUSER) == 0
                    && libc::setns(net, libc::CLONE_NEWNET) == 0
                    && libc::unshare(libc::CLONE_NEWUSER) == 0;
                libc::_exit(if joined { 0 } else { 1 });
            }
            if pid < 0 {
                return false;
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0) == pid
                && libc::WIFEXITED(status)
                && libc::WEXITSTATUS(status) == 0
        }
    }

    /// The user namespace's fd, for `setns` in the forked child.
    pub(crate) fn user_fd(&self) -> RawFd {
        self.user.as_raw_fd()
    }

    /// The network namespace's fd, for `setns` in the forked child.
    pub(crate) fn net_fd(&self) -> RawFd {
        self.net.as_raw_fd()
    }
}

/// Waits for the child's one byte that says its namespaces are ready (EOF:
/// it failed).
fn wait_ready(ready: &OwnedFd) -> io::Result<()> {
    let mut byte = 0u8;
    loop {
        // SAFETY: read of one byte into a local.
        let n = unsafe { libc::read(ready.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) };
        match n {
            1 => return Ok(()),
            0 => {
                return Err(io::Error::other(
                    "the child making the session's network namespace failed",
                ));
            }
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
}

fn open_ns(pid: libc::pid_t, kind: &str) -> io::Result<OwnedFd> {
    let path = CString::new(format!("/proc/{pid}/ns/{kind}"))?;
    // SAFETY: open on a NUL-terminated path; the fd is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The forked child: makes the namespaces, says so on `ready`, and waits
/// to be killed. Never returns.
unsafe fn make_namespaces(uid_map: &[u8], gid_map: &[u8], ready: RawFd, parent: libc::pid_t) -> ! {
    // SAFETY: single-threaded forked child; async-signal-safe calls only.
    unsafe {
        // Only `ready` stays open: a copy of the ready pipe of a sandbox
        // made at the same time by another thread would keep its maker
        // from seeing that pipe's end.
        let ready_fd = ready as libc::c_uint;
        if ready_fd > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, ready_fd - 1, 0u32);
        }
        libc::syscall(libc::SYS_close_range, ready_fd + 1, libc::c_uint::MAX, 0u32);
        // Dies with the host, should it die before killing us.
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
            || libc::getppid() != parent
        {
            libc::_exit(1);
        }
        let made = libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0
            && write_file(c"/proc/self/setgroups", b"deny")
            && write_file(c"/proc/self/uid_map", uid_map)
            && write_file(c"/proc/self/gid_map", gid_map);
        if made && libc::write(ready, [1u8].as_ptr().cast(), 1) == 1 {
            loop {
                libc::pause();
            }
        }
        libc::_exit(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The session's namespaces can be made exactly where the machine
    /// supports user and network namespaces, and once made they can be
    /// joined the way commands join them.
    #[test]
    fn a_shared_network_is_made_where_namespaces_work_and_is_joinable() {
        use crate::features::{Feature, cached};
        let uid = unsafe { libc::geteuid() };
        let gid = unsafe { libc::getegid() };
        let made = SharedNet::create(
            format!("{uid} {uid} 1\n").as_bytes(),
            format!("{gid} {gid} 1\n").as_bytes(),
        );
        let supported = cached().supports(Feature::UserNamespace)
            && cached().supports(Feature::NetworkNamespace);
        assert_eq!(made.is_ok(), supported, "{made:?}");
        if let Ok(net) = made {
            assert!(net.joinable());
        }
    }
}
