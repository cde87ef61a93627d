//! The code that runs between `fork` and `exec`.
//!
//! `std` forks a child (the *intermediate*) and calls [`enter`] in it. The
//! intermediate unshares the namespaces, writes its uid/gid maps and forks
//! again: the *grandchild* becomes PID 1 of the new PID namespace, locks
//! itself down and returns to `std`, which execs the program. The intermediate
//! never returns: it waits for the grandchild and exits with its status.
//!
//! Why an intermediate: `PR_SET_PDEATHSIG` fires when the *thread* that forked
//! exits, and tokio's threads come and go; the intermediate is single-threaded
//! and lives exactly as long as the command. It also watches the host's
//! lifeline pipe, so the sandbox dies with the host.
//!
//! Rules for this file: async-signal-safe calls only, no allocation, no locks.
//! Errors travel back through `std`'s exec-error pipe as a raw OS error that
//! encodes the failed [`Step`] and the errno ([`decode`] reads it).

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;
use std::ptr;

use libc::{c_int, c_uint, c_ulong};

use crate::plan::Plan;

/// Marks a raw OS error as ours: `TAG | step << 8 | errno`.
const TAG: i32 = 0x4b5a_0000;

/// A setup step of the child, to name what failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Unshare = 1,
    Setgroups,
    UidMap,
    GidMap,
    GuardPipe,
    Fork,
    DeathSignal,
    PrivateMounts,
    MountProc,
    MaskRun,
    MaskSecrets,
    Rlimit,
    NoNewPrivs,
    LandlockProc,
    Landlock,
    Seccomp,
}

const STEPS: [Step; 16] = [
    Step::Unshare,
    Step::Setgroups,
    Step::UidMap,
    Step::GidMap,
    Step::GuardPipe,
    Step::Fork,
    Step::DeathSignal,
    Step::PrivateMounts,
    Step::MountProc,
    Step::MaskRun,
    Step::MaskSecrets,
    Step::Rlimit,
    Step::NoNewPrivs,
    Step::LandlockProc,
    Step::Landlock,
    Step::Seccomp,
];

impl Step {
    /// What the step does, for error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::Unshare => "creating the namespaces (unshare)",
            Step::Setgroups => "writing /proc/self/setgroups",
            Step::UidMap => "writing the user namespace's uid_map",
            Step::GidMap => "writing the user namespace's gid_map",
            Step::GuardPipe => "creating the guard pipe",
            Step::Fork => "forking the namespace's first process",
            Step::DeathSignal => "setting the parent-death signal",
            Step::PrivateMounts => "making the mounts private",
            Step::MountProc => "mounting a private /proc",
            Step::MaskRun => "covering /run",
            Step::MaskSecrets => "covering root-only files under /etc",
            Step::Rlimit => "setting resource limits",
            Step::NoNewPrivs => "setting no_new_privs",
            Step::LandlockProc => "adding the /proc rule to the Landlock ruleset",
            Step::Landlock => "applying Landlock (landlock_restrict_self)",
            Step::Seccomp => "installing the seccomp filter",
        }
    }
}

/// Splits an error from `spawn` into the child's failed step and its errno,
/// when the error came from [`enter`].
pub(crate) fn decode(err: &io::Error) -> Option<(Step, io::Error)> {
    let raw = err.raw_os_error()?;
    if raw & !0xffff != TAG {
        return None;
    }
    let step = *STEPS.get(((raw >> 8) & 0xff) as usize - 1)?;
    Some((step, io::Error::from_raw_os_error(raw & 0xff)))
}

pub(crate) fn errno() -> c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn fail(step: Step) -> io::Error {
    io::Error::from_raw_os_error(TAG | ((step as i32) << 8) | (errno() & 0xff))
}

/// Writes `data` to the file at `path` in one `write`, keeping errno.
unsafe fn write_file(path: &CStr, data: &[u8]) -> bool {
    // SAFETY: plain syscalls on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let saved = errno();
        libc::close(fd);
        if n != data.len() as isize {
            *libc::__errno_location() = if n < 0 { saved } else { libc::EIO };
            return false;
        }
        true
    }
}

/// Entry point in the intermediate process (see the module docs). Returns
/// only in the grandchild, ready for `exec`; `ruleset` is the per-process
/// Landlock ruleset fd, or -1.
///
/// # Safety
/// Must be called in a freshly forked child, as a `pre_exec` closure.
pub(crate) unsafe fn enter(plan: &Plan, ruleset: RawFd) -> io::Result<()> {
    // SAFETY: we are the single thread of a forked child; every call below is
    // async-signal-safe and touches only memory prepared by the parent.
    unsafe {
        if plan.unshare_flags != 0 && libc::unshare(plan.unshare_flags) != 0 {
            return Err(fail(Step::Unshare));
        }
        if plan.user_ns {
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
        }
        // The guard pipe lets the grandchild notice an intermediate that died
        // before PR_SET_PDEATHSIG was set (getppid() is 0 for a PID 1, so the
        // usual check does not work).
        let mut guard = [-1 as c_int; 2];
        if libc::pipe2(guard.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(fail(Step::GuardPipe));
        }
        match libc::fork() {
            -1 => Err(fail(Step::Fork)),
            0 => {
                libc::close(guard[1]);
                grandchild(plan, ruleset, guard[0])
            }
            pid => {
                libc::close(guard[0]);
                crate::intermediate::run(plan, pid, guard[1])
            }
        }
    }
}

/// PID 1 of the new namespaces: lock everything down, then let `std` exec.
unsafe fn grandchild(plan: &Plan, ruleset: RawFd, guard: c_int) -> io::Result<()> {
    // SAFETY: see `enter`.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as c_ulong, 0, 0, 0) != 0 {
            return Err(fail(Step::DeathSignal));
        }
        let mut pfd = libc::pollfd {
            fd: guard,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut pfd, 1, 0) != 0 {
            // The intermediate is gone (or poll failed): nobody would relay
            // our status or kill us with the host.
            libc::_exit(1);
        }
        libc::close(guard);

        if plan.private_mounts
            && libc::mount(
                ptr::null(),
                c"/".as_ptr(),
                ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                ptr::null(),
            ) != 0
        {
            return Err(fail(Step::PrivateMounts));
        }
        if plan.mount_proc {
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                flags,
                ptr::null(),
            ) != 0
            {
                return Err(fail(Step::MountProc));
            }
        }
        if plan.mask_run {
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
            let data = c"mode=0755,size=4k";
            if libc::mount(
                c"tmpfs".as_ptr(),
                c"/run".as_ptr(),
                c"tmpfs".as_ptr(),
                flags,
                data.as_ptr().cast(),
            ) != 0
            {
                return Err(fail(Step::MaskRun));
            }
        }
        for (path, is_dir) in &plan.secrets {
            let rc = if *is_dir {
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
                let data = c"mode=0700,size=4k";
                libc::mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    data.as_ptr().cast(),
                )
            } else {
                libc::mount(
                    c"/dev/null".as_ptr(),
                    path.as_ptr(),
                    ptr::null(),
                    libc::MS_BIND,
                    ptr::null(),
                )
            };
            // A file removed since the scan is not a leak.
            if rc != 0 && errno() != libc::ENOENT {
                return Err(fail(Step::MaskSecrets));
            }
        }
        if let Some(value) = &plan.pid_max {
            // Best effort: kernels before 6.14 have one global pid_max. The
            // parent knows (see `features`) and decided whether that is fine.
            write_file(c"/proc/sys/kernel/pid_max", value);
        }
        for &(resource, soft, hard) in &plan.rlimits {
            let limit = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(resource, &limit) != 0 {
                return Err(fail(Step::Rlimit));
            }
        }
        // Only 0, 1 and 2 survive exec: whatever the host leaked without
        // O_CLOEXEC is closed. (Not closed now: std's exec-error pipe and the
        // ruleset are still needed.)
        libc::syscall(
            libc::SYS_close_range,
            3 as c_uint,
            c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        drop_capabilities(plan.cap_last);
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as c_ulong, 0, 0, 0) != 0 {
            return Err(fail(Step::NoNewPrivs));
        }
        if plan.landlock {
            if plan.proc_access != 0 {
                add_proc_rule(ruleset, plan.proc_access)?;
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as c_uint) != 0 {
                return Err(fail(Step::Landlock));
            }
        }
        // Last: the filters deny mount and unshare, used above.
        for program in &plan.seccomp {
            let fprog = libc::sock_fprog {
                len: program.len() as u16,
                filter: program.as_ptr() as *mut libc::sock_filter,
            };
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER as c_ulong,
                0 as c_ulong,
                &fprog as *const libc::sock_fprog,
            ) != 0
            {
                return Err(fail(Step::Seccomp));
            }
        }
        Ok(())
    }
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's UAPI).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Grants `access` on the freshly mounted `/proc` in this process's ruleset.
unsafe fn add_proc_rule(ruleset: RawFd, access: u64) -> io::Result<()> {
    // SAFETY: see `enter`; the attr lives on our stack for the call.
    unsafe {
        let fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        if fd < 0 {
            return Err(fail(Step::LandlockProc));
        }
        let attr = PathBeneathAttr {
            allowed_access: access,
            parent_fd: fd,
        };
        const LANDLOCK_RULE_PATH_BENEATH: c_int = 1;
        let rc = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0 as c_uint,
        );
        let err = fail(Step::LandlockProc);
        libc::close(fd);
        if rc != 0 {
            return Err(err);
        }
        Ok(())
    }
}

/// Drops every capability the new user namespace gave us, and the bounding
/// set so that exec (as uid 0 inside when the host is root) cannot regain
/// them. Failures are ignored: without a user namespace an unprivileged
/// process has nothing to drop.
unsafe fn drop_capabilities(cap_last: c_int) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SAFETY: see `enter`.
    unsafe {
        for cap in 0..=cap_last {
            libc::prctl(libc::PR_CAPBSET_DROP, cap as c_ulong, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as c_ulong,
            0,
            0,
            0,
        );
        let header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr());
    }
}
