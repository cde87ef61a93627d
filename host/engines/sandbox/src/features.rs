//! What this machine supports, found by trying: each feature is probed by
//! starting `true` inside just that layer, and finally inside all of them.
//!
//! A session needs the answer before its first process, and nine probe
//! processes cost tens of milliseconds on a two-core machine, so the
//! answer a process's sandboxes are built from ([`cached`]) first tries
//! one process inside every layer at once, checking the process limit from
//! inside: when that works, so does each layer, and the report is the one
//! the nine probes would give. Only when it fails are the layers probed one
//! by one, to name the missing one.

use std::fmt;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use crate::child;
use crate::landlock_rules::{self, FsGrant};
use crate::lifeline;
use crate::plan::{Layers, Plan};
use crate::root::RootSpec;
use crate::seccomp;
use crate::types::Limits;

/// One protection the sandbox relies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Landlock filesystem (and, from ABI 4, TCP) restrictions.
    Landlock,
    /// Unprivileged user namespaces, with the caller's uid mapped to itself.
    UserNamespace,
    /// PID namespaces: host processes invisible and unkillable.
    PidNamespace,
    /// Network namespaces: no network unless granted.
    NetworkNamespace,
    /// Mount namespaces with a private `/proc`.
    MountNamespace,
    /// Seccomp system-call filters.
    Seccomp,
    /// Resource limits, including a process-count limit that holds.
    Rlimits,
    /// All of the above together, as every command runs.
    FullSandbox,
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Feature::Landlock => "landlock",
            Feature::UserNamespace => "user namespace",
            Feature::PidNamespace => "pid namespace",
            Feature::NetworkNamespace => "network namespace",
            Feature::MountNamespace => "mount namespace + private /proc",
            Feature::Seccomp => "seccomp",
            Feature::Rlimits => "rlimits",
            Feature::FullSandbox => "sandboxed process",
        })
    }
}

/// Whether one feature works here, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureSupport {
    /// The feature.
    pub feature: Feature,
    /// Whether it worked when tried.
    pub supported: bool,
    /// Version, mechanism, or why it failed.
    pub detail: String,
}

/// What this machine supports, one line per feature (see [`check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupportReport {
    /// Kernel release, for messages.
    pub kernel: String,
    /// One entry per [`Feature`], in a fixed order.
    pub features: Vec<FeatureSupport>,
}

impl SupportReport {
    /// Whether every feature is supported: the sandbox runs without degrading.
    pub fn complete(&self) -> bool {
        self.features.iter().all(|f| f.supported)
    }

    /// The entry for one feature.
    pub fn get(&self, feature: Feature) -> Option<&FeatureSupport> {
        self.features.iter().find(|f| f.feature == feature)
    }

    /// Whether one feature is supported.
    pub fn supports(&self, feature: Feature) -> bool {
        self.get(feature).is_some_and(|f| f.supported)
    }
}

impl fmt::Display for SupportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel {}", self.kernel)?;
        for line in &self.features {
            let verdict = if line.supported {
                "supported"
            } else {
                "UNSUPPORTED"
            };
            writeln!(
                f,
                "{:<32} {verdict:<11} {}",
                line.feature.to_string(),
                line.detail
            )?;
        }
        Ok(())
    }
}

/// Probes this machine now: every feature is tried by running `true` inside it.
pub fn check() -> SupportReport {
    probe_all()
}

/// The report for this process, probed once: what every sandbox of the
/// process is built from.
pub fn cached() -> &'static SupportReport {
    static REPORT: OnceLock<SupportReport> = OnceLock::new();
    REPORT.get_or_init(|| probe_at_once().unwrap_or_else(probe_all))
}

/// The kernel release, e.g. "6.18.4".
pub(crate) fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn find_program(name: &str) -> PathBuf {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Runs `program args` inside `layers`; its standard output if it exited 0.
fn try_run(
    layers: &Layers,
    grant: Option<&FsGrant>,
    program: &Path,
    args: &[&str],
) -> Result<Vec<u8>, String> {
    let lifeline = lifeline::read_end().map_err(|e| format!("lifeline pipe: {e}"))?;
    let filters = if layers.seccomp {
        seccomp::programs()?
    } else {
        Vec::new()
    };
    // With a mount namespace the probe gets a root of its own, holding only
    // the system directories.
    let root = RootSpec {
        tmp_mib: 1,
        ..RootSpec::default()
    };
    let plan = Plan::new(layers, filters, lifeline, &root);
    let ruleset = match grant {
        Some(grant) if layers.landlock => Some(landlock_rules::create(grant)?),
        _ => None,
    };
    let ruleset_fd = ruleset.as_ref().map_or(-1, |fd| fd.as_raw_fd());
    let mut cmd = crate::launcher::confined(program);
    cmd.args(args)
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: `child::enter` is written for the forked child (see there).
    unsafe {
        cmd.pre_exec(move || child::enter(&plan, ruleset_fd, c"/"));
    }
    let out = cmd.output().map_err(|e| match child::decode(&e) {
        Some((step, errno)) => format!("{} failed: {errno}", step.describe()),
        None => format!("could not start {}: {e}", program.display()),
    })?;
    drop(ruleset);
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!("the probe process failed ({})", out.status))
    }
}

fn line(feature: Feature, result: Result<String, String>) -> FeatureSupport {
    match result {
        Ok(detail) => FeatureSupport {
            feature,
            supported: true,
            detail,
        },
        Err(detail) => FeatureSupport {
            feature,
            supported: false,
            detail,
        },
    }
}

/// Runs `true` inside the given layers, with the given filesystem grant.
type Probe<'a> = dyn Fn(Layers, Option<&FsGrant>) -> Result<(), String> + 'a;

fn probe_all() -> SupportReport {
    let truth = find_program("true");
    let run =
        |layers: Layers, grant: Option<&FsGrant>| try_run(&layers, grant, &truth, &[]).map(drop);
    // SAFETY: reads our own credentials.
    let uid = unsafe { libc::geteuid() };
    let mut features = vec![line(Feature::Landlock, probe_landlock(&run))];
    features.extend(probe_namespaces(&run, uid));
    features.push(line(Feature::Seccomp, probe_seccomp(&run)));
    features.push(line(Feature::Rlimits, probe_limits(uid, proc_layers())));
    features.push(line(Feature::FullSandbox, probe_full(&run)));
    SupportReport {
        kernel: kernel_release(),
        features,
    }
}

/// A new user namespace, the one every other namespace needs.
fn user_layers() -> Layers {
    Layers {
        user_ns: true,
        ..Layers::default()
    }
}

/// New user, PID and mount namespaces with a private `/proc`.
fn proc_layers() -> Layers {
    Layers {
        pid_ns: true,
        mount_proc: true,
        ..user_layers()
    }
}

/// A grant of the system directories only.
fn system_only() -> FsGrant {
    FsGrant {
        read: Vec::new(),
        write: Vec::new(),
        network: false,
    }
}

/// The report when every layer works: [`probe_all`]'s lines, each one
/// supported.
fn all_supported(abi: i32, uid: libc::uid_t) -> SupportReport {
    let features = vec![
        line(Feature::Landlock, Ok(landlock_detail(abi))),
        line(Feature::UserNamespace, Ok(user_detail(uid))),
        line(Feature::PidNamespace, Ok(PID_DETAIL.into())),
        line(Feature::NetworkNamespace, Ok(NET_DETAIL.into())),
        line(Feature::MountNamespace, Ok(MOUNT_DETAIL.into())),
        line(Feature::Seccomp, Ok(seccomp_detail())),
        line(Feature::Rlimits, Ok(limits_detail(uid, true))),
        line(Feature::FullSandbox, Ok(FULL_DETAIL.into())),
    ];
    SupportReport {
        kernel: kernel_release(),
        features,
    }
}

/// One process inside every layer, with the limits the probes use, that
/// checks its namespace's `pid_max`: `Some` (everything supported) when it
/// works, `None` when the layers must be probed one by one.
fn probe_at_once() -> Option<SupportReport> {
    let abi = landlock_rules::abi_version().ok()?;
    let layers = Layers {
        limits: Some(PROBE_LIMITS),
        ..full_layers()
    };
    let pid_max = try_run(
        &layers,
        Some(&system_only()),
        &find_program("cat"),
        &[PID_MAX],
    )
    .ok()?;
    if !pid_max_as_planned(&pid_max) {
        return None;
    }
    // SAFETY: reads our own credentials.
    Some(all_supported(abi, unsafe { libc::geteuid() }))
}

fn landlock_detail(abi: i32) -> String {
    format!("ABI {abi}; a restricted process ran")
}

fn user_detail(uid: libc::uid_t) -> String {
    format!("uid {uid} mapped to itself")
}

const PID_DETAIL: &str = "new PID namespace, PID 1 ran";
const NET_DETAIL: &str = "new empty network namespace";
const MOUNT_DETAIL: &str =
    "a root of its own: system directories read-only, private /proc, /tmp and /dev/shm";
const FULL_DETAIL: &str = "`true` ran inside every layer";

fn seccomp_detail() -> String {
    format!(
        "{} system calls denied ({})",
        seccomp::denied_count(),
        std::env::consts::ARCH
    )
}

fn probe_landlock(run: &Probe<'_>) -> Result<String, String> {
    landlock_rules::abi_version().and_then(|abi| {
        run(
            Layers {
                landlock: true,
                ..Layers::default()
            },
            Some(&system_only()),
        )?;
        Ok(landlock_detail(abi))
    })
}

/// The user, PID, network and mount namespaces, in that order.
fn probe_namespaces(run: &Probe<'_>, uid: libc::uid_t) -> [FeatureSupport; 4] {
    let user = user_layers();
    [
        line(
            Feature::UserNamespace,
            run(user, None).map(|()| user_detail(uid)),
        ),
        line(
            Feature::PidNamespace,
            run(
                Layers {
                    pid_ns: true,
                    ..user
                },
                None,
            )
            .map(|()| PID_DETAIL.into()),
        ),
        line(
            Feature::NetworkNamespace,
            run(
                Layers {
                    net_ns: true,
                    ..user
                },
                None,
            )
            .map(|()| NET_DETAIL.into()),
        ),
        line(
            Feature::MountNamespace,
            run(proc_layers(), None).map(|()| MOUNT_DETAIL.into()),
        ),
    ]
}

fn probe_seccomp(run: &Probe<'_>) -> Result<String, String> {
    run(
        Layers {
            seccomp: true,
            ..Layers::default()
        },
        None,
    )
    .map(|()| seccomp_detail())
}

/// Every layer, as every command runs.
pub(crate) fn full_layers() -> Layers {
    Layers {
        user_ns: true,
        pid_ns: true,
        net_ns: true,
        mount_proc: true,
        landlock: true,
        seccomp: true,
        limits: Some(Limits::default()),
    }
}

/// Every layer at once, as every command runs.
fn probe_full(run: &Probe<'_>) -> Result<String, String> {
    run(full_layers(), Some(&system_only())).map(|()| FULL_DETAIL.into())
}

/// The limits the process-limit probes run under.
const PROBE_LIMITS: Limits = Limits {
    max_processes: 64,
    ..Limits::DEFAULT
};

/// Where a process reads its PID namespace's `pid_max`.
const PID_MAX: &str = "/proc/sys/kernel/pid_max";

/// Whether `cat`'s output of [`PID_MAX`] is the value the plan writes for
/// [`PROBE_LIMITS`].
fn pid_max_as_planned(out: &[u8]) -> bool {
    let expected = PROBE_LIMITS.max_processes + 300;
    String::from_utf8_lossy(out).trim() == expected.to_string()
}

/// What [`probe_limits`] says, given whether `pid_max` could be set.
fn limits_detail(uid: libc::uid_t, pid_max: bool) -> String {
    if uid == 0 {
        "NPROC, FSIZE, CPU, CORE; host is root, which RLIMIT_NPROC exempts: \
         processes are bounded by the namespace's pid_max"
            .into()
    } else if pid_max {
        "NPROC (per sandbox), FSIZE, CPU, CORE; namespace pid_max as well".into()
    } else {
        "NPROC (per sandbox), FSIZE, CPU, CORE".into()
    }
}

/// RLIMIT_NPROC does not bind root (the kernel exempts uid 0), so for a root
/// host the process limit is the PID namespace's own `pid_max` (Linux 6.14+):
/// probe that the namespace really got the value the plan writes.
fn probe_limits(uid: libc::uid_t, proc: Layers) -> Result<String, String> {
    try_run(
        &Layers {
            limits: Some(PROBE_LIMITS),
            ..Layers::default()
        },
        None,
        &find_program("true"),
        &[],
    )?;
    let pid_max = try_run(
        &Layers {
            limits: Some(PROBE_LIMITS),
            ..proc
        },
        None,
        &find_program("cat"),
        &[PID_MAX],
    )
    .and_then(|out| {
        if pid_max_as_planned(&out) {
            Ok(())
        } else {
            Err(format!(
                "the namespace's pid_max is {}",
                String::from_utf8_lossy(&out).trim()
            ))
        }
    });
    match (uid, pid_max) {
        (0, Err(e)) => Err(format!(
            "host is root, which RLIMIT_NPROC exempts, and the PID namespace's pid_max \
             cannot be set (needs Linux 6.14): {e}"
        )),
        (uid, pid_max) => Ok(limits_detail(uid, pid_max.is_ok())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One process inside every layer answers for the nine probes exactly
    /// when every layer works, and then says what they say.
    #[test]
    fn the_probe_at_once_says_what_the_nine_probes_say() {
        let full = probe_all();
        match probe_at_once() {
            Some(quick) => assert_eq!(quick, full, "quick:\n{quick}\nfull:\n{full}"),
            None => assert!(!full.complete(), "every layer works, yet:\n{full}"),
        }
    }
}
