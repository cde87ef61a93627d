//! What this machine supports, found by trying: each feature is probed by
//! starting `true` inside just that layer, and finally inside all of them.

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
    REPORT.get_or_init(probe_all)
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

/// Runs `program args` inside `layers` and reports whether it exited 0.
fn try_run(
    layers: &Layers,
    grant: Option<&FsGrant>,
    program: &Path,
    args: &[&str],
) -> Result<(), String> {
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
    let mut cmd = crate::launcher::confined_blocking(program);
    cmd.args(args)
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: `child::enter` is written for the forked child (see there).
    unsafe {
        cmd.pre_exec(move || child::enter(&plan, ruleset_fd, c"/"));
    }
    let status = cmd.status().map_err(|e| match child::decode(&e) {
        Some((step, errno)) => format!("{} failed: {errno}", step.describe()),
        None => format!("could not start {}: {e}", program.display()),
    })?;
    drop(ruleset);
    if status.success() {
        Ok(())
    } else {
        Err(format!("the probe process failed ({status})"))
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
    let run = |layers: Layers, grant: Option<&FsGrant>| try_run(&layers, grant, &truth, &[]);
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

fn probe_landlock(run: &Probe<'_>) -> Result<String, String> {
    landlock_rules::abi_version().and_then(|abi| {
        run(
            Layers {
                landlock: true,
                ..Layers::default()
            },
            Some(&system_only()),
        )?;
        Ok(format!("ABI {abi}; a restricted process ran"))
    })
}

/// The user, PID, network and mount namespaces, in that order.
fn probe_namespaces(run: &Probe<'_>, uid: libc::uid_t) -> [FeatureSupport; 4] {
    let user = user_layers();
    [
        line(
            Feature::UserNamespace,
            run(user, None).map(|()| format!("uid {uid} mapped to itself")),
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
            .map(|()| "new PID namespace, PID 1 ran".into()),
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
            .map(|()| "new empty network namespace".into()),
        ),
        line(
            Feature::MountNamespace,
            run(proc_layers(), None).map(|()| {
                "a root of its own: system directories read-only, private /proc, /tmp and /dev/shm"
                    .into()
            }),
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
    .map(|()| {
        format!(
            "{} system calls denied ({})",
            seccomp::denied_count(),
            std::env::consts::ARCH
        )
    })
}

/// Every layer at once, as every command runs.
fn probe_full(run: &Probe<'_>) -> Result<String, String> {
    let full = Layers {
        user_ns: true,
        pid_ns: true,
        net_ns: true,
        mount_proc: true,
        landlock: true,
        seccomp: true,
        limits: Some(Limits::default()),
    };
    run(full, Some(&system_only())).map(|()| "`true` ran inside every layer".into())
}

/// RLIMIT_NPROC does not bind root (the kernel exempts uid 0), so for a root
/// host the process limit is the PID namespace's own `pid_max` (Linux 6.14+):
/// probe that the namespace really got the value the plan writes.
fn probe_limits(uid: libc::uid_t, proc: Layers) -> Result<String, String> {
    let limits = Limits {
        max_processes: 64,
        ..Limits::default()
    };
    try_run(
        &Layers {
            limits: Some(limits),
            ..Layers::default()
        },
        None,
        &find_program("true"),
        &[],
    )?;
    let expected = (limits.max_processes + 300).to_string();
    // `cat`, not `read`: dash reads byte by byte, and a sysctl file read at a
    // non-zero offset returns nothing.
    let script = format!("[ \"$(cat /proc/sys/kernel/pid_max)\" = {expected} ]");
    let pid_max = try_run(
        &Layers {
            limits: Some(limits),
            ..proc
        },
        None,
        &find_program("sh"),
        &["-c", &script],
    );
    match (uid, pid_max) {
        (0, Ok(())) => Ok(
            "NPROC, FSIZE, CPU, CORE; host is root, which RLIMIT_NPROC exempts: \
                           processes are bounded by the namespace's pid_max"
                .into(),
        ),
        (0, Err(e)) => Err(format!(
            "host is root, which RLIMIT_NPROC exempts, and the PID namespace's pid_max \
             cannot be set (needs Linux 6.14): {e}"
        )),
        (_, Ok(())) => {
            Ok("NPROC (per sandbox), FSIZE, CPU, CORE; namespace pid_max as well".into())
        }
        (_, Err(_)) => Ok("NPROC (per sandbox), FSIZE, CPU, CORE".into()),
    }
}
