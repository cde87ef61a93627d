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

use crate::plan::RootPlan;
use crate::root::{OLD_ROOT, RootStep, STAGE, STAGE_OLD_ROOT};
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
    RootStage,
    RootPivot,
    RootBuild,
    RootLeave,
    Chdir,
    Cgroup,
}

const STEPS: [Step; 22] = [
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
    Step::RootStage,
    Step::RootPivot,
    Step::RootBuild,
    Step::RootLeave,
    Step::Chdir,
    Step::Cgroup,
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
            Step::RootStage => "mounting the tmpfs of the sandbox's own root",
            Step::RootPivot => "moving into the sandbox's own root (pivot_root)",
            Step::RootBuild => {
                "building the sandbox's root (binding the system and granted directories)"
            }
            Step::RootLeave => "detaching the host's root from the sandbox",
            Step::Chdir => "entering the working directory in the sandbox's root",
            Step::Cgroup => "joining the session's control group",
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
            // The session's process limit: said as such by `exec`.
            -1 if errno() == libc::EAGAIN => Err(io::Error::from_raw_os_error(libc::EAGAIN)),
            -1 => Err(fail(Step::Fork)),
            0 => {
                libc::close(guard[1]);
                grandchild(plan, ruleset, guard[0], cwd)
            }
            pid => {
                libc::close(guard[0]);
                crate::intermediate::run(plan, pid, guard[1])
            }
        }
    }
}

/// PID 1 of the new namespaces: lock everything down, then let `std` exec.
unsafe fn grandchild(plan: &Plan, ruleset: RawFd, guard: c_int, cwd: &CStr) -> io::Result<()> {
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
        if let Some(root) = &plan.root {
            build_root(root)?;
            // A directory outside the grant is not in this root: start in
            // the workspace instead.
            if libc::chdir(cwd.as_ptr()) != 0 && libc::chdir(root.fallback_cwd.as_ptr()) != 0 {
                return Err(fail(Step::Chdir));
            }
        } else {
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
                add_path_rule(ruleset, c"/proc", plan.proc_access)?;
            }
            if let Some(root) = &plan.root {
                // The private /tmp and /dev/shm exist only in this root.
                for dir in [c"/tmp", c"/dev/shm"] {
                    add_path_rule(ruleset, dir, root.private_access)?;
                }
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

/// Grants `access` on `dir`, a directory that exists only in this process's
/// namespaces (its `/proc`, its private `/tmp`), in its ruleset.
unsafe fn add_path_rule(ruleset: RawFd, dir: &CStr, access: u64) -> io::Result<()> {
    // SAFETY: see `enter`; the attr lives on our stack for the call.
    unsafe {
        let fd = libc::open(
            dir.as_ptr(),
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

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const AT_RECURSIVE: c_uint = 0x8000;

/// Sets `attrs` on the mount at `path` (and every mount below it when
/// `recursive`).
unsafe fn set_mount_attrs(path: &CStr, attrs: u64, recursive: bool) -> bool {
    let attr = MountAttr {
        attr_set: attrs,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: see `enter`; the attr lives on our stack for the call.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        ) == 0
    }
}

/// Builds the sandbox's own root (see [`crate::root`]): a tmpfs mounted on
/// the host's `/tmp` becomes `/`, the host's root moves under
/// [`OLD_ROOT`] while the steps bind from it, and is then detached, and
/// the new root is made read-only.
unsafe fn build_root(root: &RootPlan) -> io::Result<()> {
    // SAFETY: see `enter`.
    unsafe {
        let flags = libc::MS_NOSUID | libc::MS_NODEV;
        if libc::mount(
            c"tmpfs".as_ptr(),
            STAGE.as_ptr(),
            c"tmpfs".as_ptr(),
            flags,
            c"mode=0755,size=1m".as_ptr().cast(),
        ) != 0
        {
            return Err(fail(Step::RootStage));
        }
        if libc::mkdir(STAGE_OLD_ROOT.as_ptr(), 0o700) != 0
            || libc::syscall(
                libc::SYS_pivot_root,
                STAGE.as_ptr(),
                STAGE_OLD_ROOT.as_ptr(),
            ) != 0
            || libc::chdir(c"/".as_ptr()) != 0
        {
            return Err(fail(Step::RootPivot));
        }
        for step in &root.steps {
            if !run_step(step) {
                return Err(fail(Step::RootBuild));
            }
        }
        if libc::umount2(OLD_ROOT.as_ptr(), libc::MNT_DETACH) != 0
            || libc::rmdir(OLD_ROOT.as_ptr()) != 0
            || !set_mount_attrs(c"/", MOUNT_ATTR_RDONLY, false)
        {
            return Err(fail(Step::RootLeave));
        }
        Ok(())
    }
}

/// Carries out one step of the root; false (errno set) when it failed.
unsafe fn run_step(step: &RootStep) -> bool {
    // SAFETY: see `enter`.
    unsafe {
        match step {
            RootStep::Dir(dir) => libc::mkdir(dir.as_ptr(), 0o755) == 0 || errno() == libc::EEXIST,
            RootStep::Symlink { target, link } => {
                libc::symlink(target.as_ptr(), link.as_ptr()) == 0 || errno() == libc::EEXIST
            }
            RootStep::File(path) => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                );
                fd >= 0 && libc::close(fd) == 0
            }
            RootStep::Bind {
                from,
                to,
                read_only,
                devices,
            } => {
                if libc::mount(
                    from.as_ptr(),
                    to.as_ptr(),
                    ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    ptr::null(),
                ) != 0
                {
                    // A path removed since the plan was made is not there to
                    // bind (or to protect).
                    return errno() == libc::ENOENT;
                }
                let mut attrs = MOUNT_ATTR_NOSUID;
                if !devices {
                    attrs |= MOUNT_ATTR_NODEV;
                }
                if *read_only {
                    attrs |= MOUNT_ATTR_RDONLY;
                }
                set_mount_attrs(to, attrs, true)
            }
            RootStep::Tmpfs {
                to,
                data,
                read_only,
            } => {
                let mut flags = libc::MS_NOSUID | libc::MS_NODEV;
                if *read_only {
                    flags |= libc::MS_RDONLY | libc::MS_NOEXEC;
                }
                libc::mount(
                    c"tmpfs".as_ptr(),
                    to.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    data.as_ptr().cast(),
                ) == 0
            }
            RootStep::Proc(to) => {
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                libc::mount(
                    c"proc".as_ptr(),
                    to.as_ptr(),
                    c"proc".as_ptr(),
                    flags,
                    ptr::null(),
                ) == 0
            }
        }
    }
}
