//! Building the sandbox's own root inside the grandchild's mount namespace
//! (planned by [`crate::root`]).

use std::ffi::CStr;
use std::io;
use std::ptr;

use libc::{c_int, c_uint};

use super::step::{Step, fail};
use crate::after_fork::errno;
use crate::plan::RootPlan;
use crate::refresh::{MAX_KEPT, Refresh};
use crate::root::{OLD_ROOT, RootStep, STAGE, STAGE_OLD_ROOT};

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
    // SAFETY: see `super::enter`; the attr lives on our stack for the call.
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
pub(super) unsafe fn build_root(root: &RootPlan) -> io::Result<()> {
    // SAFETY: see `super::enter`.
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

/// Remakes what a command of the warm sandbox gets afresh in its copy of
/// the resident process's root (see [`crate::refresh`]): the kept mounts
/// are cloned, the private directories and `/proc` mounted anew, the
/// mount points made again, and the clones moved back onto them.
pub(super) unsafe fn refresh_root(refresh: &Refresh) -> io::Result<()> {
    let mut clones = [-1 as c_int; MAX_KEPT];
    // SAFETY: see `super::enter`; every fd in `clones` is ours.
    unsafe {
        let result = refresh_with(refresh, &mut clones);
        for fd in clones.into_iter().filter(|fd| *fd >= 0) {
            libc::close(fd);
        }
        result
    }
}

unsafe fn refresh_with(refresh: &Refresh, clones: &mut [c_int; MAX_KEPT]) -> io::Result<()> {
    const OPEN_TREE_CLONE: c_uint = 1;
    const MOVE_MOUNT_F_EMPTY_PATH: c_uint = 0x4;
    // SAFETY: see `super::enter`.
    unsafe {
        for (slot, path) in clones.iter_mut().zip(&refresh.kept) {
            let fd = libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                path.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as c_uint | AT_RECURSIVE,
            ) as c_int;
            // A path that the root could not bind is not there to keep.
            if fd < 0 && errno() != libc::ENOENT {
                return Err(fail(Step::RootKeep));
            }
            *slot = fd;
        }
        for step in &refresh.steps {
            if !run_step(step) {
                return Err(fail(Step::RootRefresh));
            }
        }
        for (fd, path) in clones.iter().zip(&refresh.kept) {
            if *fd >= 0
                && libc::syscall(
                    libc::SYS_move_mount,
                    *fd,
                    c"".as_ptr(),
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH,
                ) != 0
            {
                return Err(fail(Step::RootKeep));
            }
        }
        Ok(())
    }
}

/// Carries out one step of the root; false (errno set) when it failed.
unsafe fn run_step(step: &RootStep) -> bool {
    // SAFETY: see `super::enter`.
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
