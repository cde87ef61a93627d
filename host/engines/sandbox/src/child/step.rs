//! The child's setup steps, and how a failed one travels back to the host:
//! `std` passes the raw OS error of a `pre_exec` closure through its
//! exec-error pipe, so the error encodes the failed [`Step`] and the errno.

use std::io;

use crate::after_fork::errno;

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
    JoinNet,
    RootKeep,
    RootRefresh,
}

const STEPS: [Step; 25] = [
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
    Step::JoinNet,
    Step::RootKeep,
    Step::RootRefresh,
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
            Step::JoinNet => "joining the session's network namespace (setns)",
            Step::RootKeep => "keeping the granted directories under /tmp (open_tree, move_mount)",
            Step::RootRefresh => "mounting a fresh /tmp, /dev/shm and /proc",
        }
    }
}

/// Splits an error from `spawn` into the child's failed step and its errno,
/// when the error came from [`super::enter`].
pub(crate) fn decode(err: &io::Error) -> Option<(Step, io::Error)> {
    let raw = err.raw_os_error()?;
    if raw & !0xffff != TAG {
        return None;
    }
    let step = *STEPS.get(((raw >> 8) & 0xff) as usize - 1)?;
    Some((step, io::Error::from_raw_os_error(raw & 0xff)))
}

/// The error that reports `step` failed with the current errno.
pub(super) fn fail(step: Step) -> io::Error {
    io::Error::from_raw_os_error(TAG | ((step as i32) << 8) | (errno() & 0xff))
}
