//! PID 1 of the new namespaces: it locks itself down, step by step, then
//! returns to `std`, which execs the program. The order matters: mounts
//! first (the seccomp filters deny `mount`), the filters last.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;
use std::ptr;

use libc::{c_int, c_uint, c_ulong};

use super::own_root::{build_root, refresh_root};
use super::step::{Step, fail};
use crate::after_fork::{errno, write_file};
use crate::plan::Plan;

/// Locks everything down, then lets `std` exec; `guard` is the read end of
/// the intermediate's guard pipe.
pub(super) unsafe fn run(plan: &Plan, ruleset: RawFd, guard: c_int, cwd: &CStr) -> io::Result<()> {
    // SAFETY: see `super::enter`.
    unsafe {
        tie_to_intermediate(guard)?;
        lock_down(plan, ruleset, cwd)
    }
}

/// The steps of PID 1, from its mounts to its filters, for the program
/// the caller then execs in `cwd`.
pub(super) unsafe fn lock_down(plan: &Plan, ruleset: RawFd, cwd: &CStr) -> io::Result<()> {
    // SAFETY: see `super::enter`.
    unsafe {
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
            match &root.refresh {
                Some(refresh) => refresh_root(refresh)?,
                None => build_root(root)?,
            }
            // A directory outside the grant is not in this root: start in
            // the workspace instead.
            if libc::chdir(cwd.as_ptr()) != 0 && libc::chdir(root.fallback_cwd.as_ptr()) != 0 {
                return Err(fail(Step::Chdir));
            }
        } else {
            cover_host_mounts(plan)?;
        }
        mask_secrets(plan)?;
        if plan.zygote {
            // The warm sandbox's resident process runs no program: it
            // starts the commands, which mount their own `/proc` and
            // `/tmp` (no Landlock domain and none of their filters would
            // let them), so it stops here, with one capability left (see
            // `KEEP_FOR_ROOT_MAP`) and no way to gain another.
            drop_capabilities(plan.cap_last, KEEP_FOR_ROOT_MAP);
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as c_ulong, 0, 0, 0) != 0 {
                return Err(fail(Step::NoNewPrivs));
            }
            return Ok(());
        }
        set_limits(plan)?;
        // Only 0, 1 and 2 survive exec: whatever the host leaked without
        // O_CLOEXEC is closed. (Not closed now: std's exec-error pipe and the
        // ruleset are still needed.)
        libc::syscall(
            libc::SYS_close_range,
            3 as c_uint,
            c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        drop_capabilities(plan.cap_last, 0);
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as c_ulong, 0, 0, 0) != 0 {
            return Err(fail(Step::NoNewPrivs));
        }
        restrict_with_landlock(plan, ruleset)?;
        // Last: the filters deny mount and unshare, used above.
        install_seccomp(plan)
    }
}

/// Dies with the intermediate (parent-death signal), and exits now if it is
/// already gone.
unsafe fn tie_to_intermediate(guard: c_int) -> io::Result<()> {
    // SAFETY: see `super::enter`.
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
        Ok(())
    }
}

/// Without a root of its own: a private `/proc` over the host's, and `/run`
/// covered, as the plan asks.
unsafe fn cover_host_mounts(plan: &Plan) -> io::Result<()> {
    // SAFETY: see `super::enter`.
    unsafe {
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
        Ok(())
    }
}

/// Covers the root-only files and directories the plan lists: an empty
/// tmpfs over a directory, `/dev/null` over a file.
unsafe fn mask_secrets(plan: &Plan) -> io::Result<()> {
    // SAFETY: see `super::enter`.
    unsafe {
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
        Ok(())
    }
}

/// The namespace's `pid_max` and the process's resource limits.
unsafe fn set_limits(plan: &Plan) -> io::Result<()> {
    // SAFETY: see `super::enter`.
    unsafe {
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
        Ok(())
    }
}

/// Adds the rules only this process can name (its `/proc`, its private
/// `/tmp` and `/dev/shm`) to the ruleset, then restricts itself with it.
unsafe fn restrict_with_landlock(plan: &Plan, ruleset: RawFd) -> io::Result<()> {
    if !plan.landlock {
        return Ok(());
    }
    // SAFETY: see `super::enter`.
    unsafe {
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
        Ok(())
    }
}

/// Installs the plan's seccomp filters, in order.
unsafe fn install_seccomp(plan: &Plan) -> io::Result<()> {
    // SAFETY: see `super::enter`; each program lives in the plan for the call.
    unsafe {
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
    // SAFETY: see `super::enter`; the attr lives on our stack for the call.
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

/// What the warm sandbox's resident process keeps: `CAP_SETFCAP`. A user
/// namespace may map uid 0 (a host that runs as root maps uid 0 to itself)
/// only if its creator held it (Linux 5.12+), and the resident's commands
/// create theirs from its forked children.
const KEEP_FOR_ROOT_MAP: u64 = 1 << 31;

/// Drops every capability the new user namespace gave us but those in
/// `keep` (a mask of capability numbers), and the bounding set so that
/// exec (as uid 0 inside when the host is root) cannot regain them.
/// Failures are ignored: without a user namespace an unprivileged process
/// has nothing to drop.
unsafe fn drop_capabilities(cap_last: c_int, keep: u64) {
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
    // SAFETY: see `super::enter`.
    unsafe {
        for cap in (0..=cap_last).filter(|cap| keep & (1u64 << cap) == 0) {
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
        let data = [
            Data {
                effective: keep as u32,
                permitted: keep as u32,
                inheritable: 0,
            },
            Data {
                effective: (keep >> 32) as u32,
                permitted: (keep >> 32) as u32,
                inheritable: 0,
            },
        ];
        libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr());
    }
}
