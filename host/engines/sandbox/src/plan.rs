//! Everything the forked child needs, prepared in the parent.
//!
//! Between `fork` and `exec` the child of a multi-threaded process may not
//! allocate (another thread may have held the allocator's lock at the time of
//! the fork), so every buffer, path and BPF program is built here, once per
//! [`crate::Sandbox`], and only read by [`crate::child`].

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::OnceLock;

use crate::refresh::Refresh;
use crate::root::{RootSpec, RootStep};
use crate::shared_net::SharedNet;
use crate::types::Limits;

/// Which layers a process gets. Each flag is on unless the machine lacks the
/// feature and the operator allowed degraded mode.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Layers {
    /// New user namespace (needed for every other namespace when unprivileged).
    pub user_ns: bool,
    /// New PID namespace: host processes invisible and unkillable.
    pub pid_ns: bool,
    /// An empty network namespace: the session's, when it could be made
    /// (see [`crate::shared_net`]), else a new one per process.
    pub net_ns: bool,
    /// New mount namespace with a private `/proc` (needs `pid_ns`).
    pub mount_proc: bool,
    /// Landlock restriction (the ruleset itself is made per process).
    pub landlock: bool,
    /// Seccomp filters.
    pub seccomp: bool,
    /// Resource limits, when any.
    pub limits: Option<Limits>,
}

/// The prepared, read-only instructions for the child.
#[derive(Debug)]
pub(crate) struct Plan {
    /// Flags for `unshare(2)` in the intermediate process.
    pub unshare_flags: libc::c_int,
    /// Whether the uid/gid maps must be written (a new user namespace).
    pub user_ns: bool,
    /// `"<uid> <uid> 1\n"`: the caller's uid mapped to itself.
    pub uid_map: Vec<u8>,
    /// `"<gid> <gid> 1\n"`.
    pub gid_map: Vec<u8>,
    /// Make every mount private so nothing we mount leaks to the host.
    pub private_mounts: bool,
    /// Mount a fresh `/proc` showing only the sandbox's processes.
    pub mount_proc: bool,
    /// Cover `/run` with an empty read-only tmpfs (see [`crate::landlock_rules`]
    /// for why: daemon sockets live there).
    pub mask_run: bool,
    /// Root-only files and directories under `/etc` to cover (files with
    /// `/dev/null`, directories with an empty tmpfs); `true` marks a directory.
    pub secrets: Vec<(CString, bool)>,
    /// Decimal value for the namespace's `kernel.pid_max`, the process limit
    /// that still holds when the host runs as root (root ignores RLIMIT_NPROC).
    pub pid_max: Option<Vec<u8>>,
    /// `(resource, soft, hard)` for `setrlimit(2)`.
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64, u64)>,
    /// Highest capability number, to empty the bounding set.
    pub cap_last: libc::c_int,
    /// Restrict with the per-process Landlock ruleset.
    pub landlock: bool,
    /// Landlock rights for the private `/proc`, added inside the child because
    /// the new proc instance only exists there (0: no rule).
    pub proc_access: u64,
    /// Seccomp programs, installed in order.
    pub seccomp: Vec<Vec<libc::sock_filter>>,
    /// Read end of the host's lifeline pipe.
    pub lifeline: RawFd,
    /// The process's own root, built from the grant (with a mount
    /// namespace); replaces `mount_proc` and `mask_run`.
    pub root: Option<RootPlan>,
    /// The session's control groups (`cgroup.procs` files) the process
    /// joins before anything else, so that everything it starts is counted
    /// with the rest of the session.
    pub cgroup_procs: Vec<CString>,
    /// The session's network namespace, joined instead of a new one per
    /// process (see [`crate::shared_net`]).
    pub shared_net: Option<SharedNet>,
    /// PID 1 does not exec a program: it becomes the warm sandbox's
    /// resident process once its root is built (see `spawner/zygote.rs`).
    pub zygote: bool,
    /// Whether the spawner may serve this plan warm (see
    /// [`Plan::for_warm_commands`]); off with [`COLD_VARIABLE`] set.
    pub warm: bool,
}

/// Set (to anything but `0`), every process builds its sandbox afresh:
/// a switch to compare the two ways and to test the cold one, never
/// needed for safety (both give a command the same sandbox).
pub(crate) const COLD_VARIABLE: &str = "KAIZEN_SANDBOX_COLD";

/// Whether [`COLD_VARIABLE`] asks for the cold way.
fn cold_asked() -> bool {
    std::env::var_os(COLD_VARIABLE).is_some_and(|v| !v.is_empty() && v != "0")
}

/// How the child builds its own root (see [`crate::root`]).
#[derive(Debug)]
pub(crate) struct RootPlan {
    /// The steps, in order.
    pub steps: Vec<RootStep>,
    /// Landlock rights on the private `/tmp` and `/dev/shm`: every right
    /// the ruleset handles.
    pub private_access: u64,
    /// Where the process starts when its working directory is not in its
    /// root.
    pub fallback_cwd: CString,
    /// Set for the commands of a warm sandbox: the root is the resident
    /// process's, already built, and only this is remade.
    pub refresh: Option<Refresh>,
}

/// Unshare flags for the given layers.
fn unshare_flags(layers: &Layers) -> libc::c_int {
    let mut flags = 0;
    if layers.user_ns {
        flags |= libc::CLONE_NEWUSER;
    }
    if layers.pid_ns {
        // IPC and UTS come with the PID namespace: they are free and keep
        // System V objects and the hostname apart from the host.
        flags |= libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    }
    if layers.mount_proc {
        flags |= libc::CLONE_NEWNS;
    }
    if layers.net_ns {
        flags |= libc::CLONE_NEWNET;
    }
    flags
}

/// Slack above `max_processes` for `pid_max`: after the first wrap-around the
/// kernel hands out PIDs from 300 up, so this many numbers are not reusable.
const PID_RESERVED: u64 = 300;

impl Plan {
    /// Prepares a plan for these layers; `root` describes the process's own
    /// root, built when the layers include a mount namespace.
    pub(crate) fn new(
        layers: &Layers,
        seccomp: Vec<Vec<libc::sock_filter>>,
        lifeline: RawFd,
        root: &RootSpec,
    ) -> Plan {
        // SAFETY: these calls only read the caller's credentials.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut rlimits = Vec::new();
        let mut pid_max = None;
        if let Some(limits) = layers.limits {
            rlimits.push((
                libc::RLIMIT_NPROC,
                limits.max_processes,
                limits.max_processes,
            ));
            rlimits.push((
                libc::RLIMIT_FSIZE,
                limits.max_file_size,
                limits.max_file_size,
            ));
            // The soft limit sends SIGXCPU; the hard one, a little later,
            // SIGKILL, for programs that catch SIGXCPU.
            rlimits.push((
                libc::RLIMIT_CPU,
                limits.cpu_seconds,
                limits.cpu_seconds.saturating_add(5),
            ));
            // The heap and private writable mappings: what a process really
            // allocates (address space reserved but not writable, as V8 and
            // Go reserve, is not counted).
            rlimits.push((libc::RLIMIT_DATA, limits.max_memory, limits.max_memory));
            if layers.mount_proc {
                let value = (limits.max_processes + PID_RESERVED).clamp(PID_RESERVED + 1, 1 << 22);
                pid_max = Some(value.to_string().into_bytes());
            }
        }
        // No core files: they would land in the workspace and can be huge.
        rlimits.push((libc::RLIMIT_CORE, 0, 0));
        Plan {
            unshare_flags: unshare_flags(layers),
            user_ns: layers.user_ns,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            private_mounts: layers.mount_proc,
            mount_proc: layers.mount_proc,
            mask_run: layers.mount_proc && Path::new("/run").is_dir(),
            // Only a root host needs this: its sandbox is uid 0 too, and owner
            // permissions (say, /etc/shadow's rw-r-----) still apply to it.
            secrets: if layers.mount_proc && uid == 0 {
                root_only_files().to_vec()
            } else {
                Vec::new()
            },
            pid_max,
            rlimits,
            cap_last: cap_last(),
            landlock: layers.landlock,
            proc_access: if layers.landlock && layers.mount_proc {
                crate::landlock_rules::PROC_ACCESS
            } else {
                0
            },
            seccomp: if layers.seccomp { seccomp } else { Vec::new() },
            lifeline,
            root: layers.mount_proc.then(|| RootPlan {
                steps: crate::root::plan(root),
                private_access: crate::landlock_rules::all_fs_access(),
                fallback_cwd: CString::new(root.fallback_cwd.as_os_str().as_bytes())
                    .unwrap_or_else(|_| c"/".into()),
                refresh: None,
            }),
            cgroup_procs: Vec::new(),
            shared_net: None,
            zygote: false,
            warm: !cold_asked(),
        }
    }

    /// The plan of the commands a warm sandbox's resident process starts
    /// (see `spawner/zygote.rs`); `None` when this plan cannot be served
    /// warm: no root of its own, no user or PID
    /// namespace, or a root with too many mounts under `/tmp`.
    ///
    /// Each command gets new user, PID, mount and IPC namespaces, nested in
    /// the resident's: the network and UTS namespaces, the control groups,
    /// the root and its covers of secrets are the resident's, made once.
    pub(crate) fn for_warm_commands(&self) -> Option<Plan> {
        let root = self.root.as_ref()?;
        let nested = libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if !self.warm
            || !self.user_ns
            || self.unshare_flags & nested != nested
            || root.refresh.is_some()
        {
            return None;
        }
        let refresh = crate::refresh::refresh(&root.steps)?;
        Some(Plan {
            unshare_flags: nested | libc::CLONE_NEWIPC,
            user_ns: true,
            uid_map: self.uid_map.clone(),
            gid_map: self.gid_map.clone(),
            private_mounts: self.private_mounts,
            mount_proc: self.mount_proc,
            mask_run: false,
            secrets: Vec::new(),
            pid_max: self.pid_max.clone(),
            rlimits: self.rlimits.clone(),
            cap_last: self.cap_last,
            landlock: self.landlock,
            proc_access: self.proc_access,
            seccomp: self.seccomp.clone(),
            // The resident clones each command itself: no intermediate
            // watches a lifeline (see `child/cloned.rs`).
            lifeline: -1,
            root: Some(RootPlan {
                steps: Vec::new(),
                private_access: root.private_access,
                fallback_cwd: root.fallback_cwd.clone(),
                refresh: Some(refresh),
            }),
            cgroup_procs: Vec::new(),
            shared_net: None,
            zygote: false,
            warm: false,
        })
    }

    /// Has every process join `net` instead of making a network namespace
    /// of its own.
    pub(crate) fn share_network(&mut self, net: SharedNet) {
        self.unshare_flags &= !libc::CLONE_NEWNET;
        self.shared_net = Some(net);
    }

    /// The user and network namespace fds to join, if shared.
    pub(crate) fn shared_net_fds(&self) -> Option<(RawFd, RawFd)> {
        self.shared_net
            .as_ref()
            .map(|net| (net.user_fd(), net.net_fd()))
    }
}

/// The highest capability the kernel knows (40 on current kernels).
fn cap_last() -> libc::c_int {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

/// Entries under `/etc` that others may not read, found once per process.
/// Landlock grants `/etc` as a whole, so these are hidden with mounts instead.
fn root_only_files() -> &'static [(CString, bool)] {
    static FOUND: OnceLock<Vec<(CString, bool)>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut found = Vec::new();
        scan(Path::new("/etc"), 0, &mut found);
        found
    })
}

fn scan(dir: &Path, depth: usize, found: &mut Vec<(CString, bool)>) {
    const MAX_DEPTH: usize = 6;
    const MAX_ENTRIES: usize = 1024;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if found.len() >= MAX_ENTRIES {
            return;
        }
        // symlink_metadata: a link's target is judged where it lives.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let path = entry.path();
        let Ok(cpath) = CString::new(path.as_os_str().as_bytes()) else {
            continue;
        };
        if meta.is_dir() {
            if meta.mode() & 0o005 != 0o005 {
                found.push((cpath, true));
            } else if depth < MAX_DEPTH {
                scan(&path, depth + 1, found);
            }
        } else if meta.is_file() && meta.mode() & 0o004 == 0 {
            found.push((cpath, false));
        }
    }
}
