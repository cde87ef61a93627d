//! `check()` is truthful on this machine: each feature it reports is probed
//! here again, by other means (the `landlock` crate, util-linux's
//! `unshare`, raw `prctl` and `setrlimit` calls), and the two must agree.
//! A feature missing on the machine must be reported missing, and then fails
//! this test unless opted out (see `kaizen-test-support`): the rest of the
//! suite needs every one of them.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use kaizen_sandbox::Feature;
use kaizen_test_support::missing_feature;

/// What a probe found: how the feature showed itself, or why it did not.
type Probed = Result<String, String>;

#[test]
fn check_reports_what_this_machine_supports() {
    let report = kaizen_sandbox::check();
    println!("{report}");
    let mut probes: Vec<(Feature, &str, Probed)> = vec![
        (Feature::Landlock, "landlock", landlock()),
        (Feature::UserNamespace, "user-namespace", user_namespace()),
        (Feature::PidNamespace, "pid-namespace", pid_namespace()),
        (
            Feature::NetworkNamespace,
            "network-namespace",
            network_namespace(),
        ),
        (
            Feature::MountNamespace,
            "mount-namespace",
            mount_namespace(),
        ),
        (Feature::Seccomp, "seccomp", seccomp()),
        (Feature::Rlimits, "rlimits", rlimits()),
    ];
    // Every layer together works when each works alone: a failure of the
    // combination only is the sandbox's own bug, which this test should
    // catch as a disagreement.
    let full = match probes.iter().find(|(_, _, probed)| probed.is_err()) {
        Some((feature, _, _)) => Err(format!("{feature} is missing")),
        None => Ok("every layer works on its own".into()),
    };
    probes.push((Feature::FullSandbox, "full-sandbox", full));
    // A feature added to the report needs a probe here.
    assert_eq!(
        report.features.len(),
        probes.len(),
        "one probe per reported feature:\n{report}"
    );

    let mut disagreements = Vec::new();
    for (feature, _, probed) in &probes {
        let reported = report
            .get(*feature)
            .unwrap_or_else(|| panic!("{feature} is not reported:\n{report}"));
        println!("{feature}: probed here: {probed:?}");
        if reported.supported != probed.is_ok() {
            disagreements.push(format!(
                "{feature}: check() says supported={} ({}), probing it here found {probed:?}",
                reported.supported, reported.detail
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "check() is wrong about this machine:\n{}",
        disagreements.join("\n")
    );

    // The version, too: what the kernel told the probe is what is reported.
    if let Some((_, _, Ok(abi))) = probes.iter().find(|(f, _, _)| *f == Feature::Landlock) {
        let detail = &report.get(Feature::Landlock).unwrap().detail;
        assert!(
            detail.starts_with(&format!("{abi};")),
            "{detail} (probed: {abi})"
        );
    }
    for (_, name, probed) in &probes {
        if let Err(why) = probed {
            missing_feature(env!("CARGO_TARGET_TMPDIR"), name, why);
        }
    }
}

/// Landlock: a thread restricts itself to nothing (ABI 1 rights, as a hard
/// requirement) and can then no longer read this test's own binary. A
/// thread, because Landlock binds only the thread that asks and its future
/// children, and this one ends here.
fn landlock() -> Probed {
    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
        RulesetStatus,
    };
    std::thread::spawn(|| {
        let status = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V1))
            .and_then(|ruleset| ruleset.create())
            .and_then(|ruleset| ruleset.restrict_self())
            .map_err(|e| format!("restricting a thread failed: {e}"))?;
        let abi = match status.landlock {
            LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            } => kernel_abi.unwrap_or(effective_abi as i32),
            other => return Err(format!("Landlock is {other:?}")),
        };
        if status.ruleset != RulesetStatus::FullyEnforced {
            return Err(format!("the ruleset is {:?}", status.ruleset));
        }
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        match std::fs::read(&exe) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Ok(format!("ABI {abi}")),
            other => Err(format!(
                "ABI {abi}, yet a restricted thread reading {} got {:?}",
                exe.display(),
                other.map(|bytes| bytes.len())
            )),
        }
    })
    .join()
    .unwrap()
}

/// Runs `program args` and returns its stdout, or why it failed.
fn run(program: &str, args: &[&str], prepare: impl FnOnce(&mut Command)) -> Probed {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    prepare(&mut cmd);
    let shown = format!("`{program} {}`", args.join(" "));
    let out = cmd
        .output()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `args` under util-linux's `unshare`, the caller's uid mapped to root
/// in a new user namespace (so that capabilities survive exec).
fn unshared(args: &[&str]) -> Probed {
    let args: Vec<&str> = ["--user", "--map-root-user"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    run("unshare", &args, |_| {})
}

fn euid() -> libc::uid_t {
    // SAFETY: reads this process's credentials.
    unsafe { libc::geteuid() }
}

fn user_namespace() -> Probed {
    let map = unshared(&["cat", "/proc/self/uid_map"])?;
    let fields: Vec<&str> = map.split_whitespace().collect();
    let expected = ["0".to_string(), euid().to_string(), "1".to_string()];
    if fields != expected {
        return Err(format!("the new namespace's uid_map is {map:?}"));
    }
    Ok(format!("uid {} mapped", euid()))
}

fn pid_namespace() -> Probed {
    let pid = unshared(&["--pid", "--fork", "sh", "-c", "echo $$"])?;
    match pid.trim() {
        "1" => Ok("the first process is PID 1".into()),
        other => Err(format!(
            "the first process in the new namespace is PID {other}"
        )),
    }
}

fn network_namespace() -> Probed {
    let ours = std::fs::read_link("/proc/self/ns/net").map_err(|e| e.to_string())?;
    let out = unshared(&[
        "--net",
        "sh",
        "-c",
        "readlink /proc/self/ns/net; cat /proc/self/net/dev",
    ])?;
    let mut lines = out.lines();
    let theirs = lines.next().unwrap_or_default();
    if theirs == ours.to_string_lossy() {
        return Err(format!("still in the host's {theirs}"));
    }
    // /proc/net/dev: two header lines, then `<name>: <counters>`.
    let links: Vec<&str> = lines
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    if links != ["lo"] {
        return Err(format!("the new namespace has links {links:?}"));
    }
    Ok(format!("{theirs}, only lo"))
}

fn mount_namespace() -> Probed {
    let listing = unshared(&["--mount", "--pid", "--fork", "--mount-proc", "ls", "/proc"])?;
    let pids: Vec<&str> = listing
        .lines()
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    if pids != ["1"] {
        return Err(format!("the private /proc lists processes {pids:?}"));
    }
    Ok("a private /proc lists only PID 1".into())
}

/// The `Seccomp:` mode a process reports in `/proc/self/status`.
fn seccomp_mode(status: &str) -> Option<&str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Seccomp:"))
        .map(str::trim)
}

/// Seccomp: a child installs a filter allowing everything, and the kernel
/// then reports it in filter mode (2).
fn seccomp() -> Probed {
    let status = run("cat", &["/proc/self/status"], |cmd| {
        // SAFETY: only prctl, which is async-signal-safe, between fork and
        // exec; the filter lives on the child's stack.
        unsafe {
            cmd.pre_exec(|| {
                let allow = [libc::sock_filter {
                    code: (libc::BPF_RET | libc::BPF_K) as u16,
                    jt: 0,
                    jf: 0,
                    k: libc::SECCOMP_RET_ALLOW,
                }];
                let program = libc::sock_fprog {
                    len: allow.len() as u16,
                    filter: allow.as_ptr().cast_mut(),
                };
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER,
                        &program as *const libc::sock_fprog,
                    ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    })?;
    match seccomp_mode(&status) {
        Some("2") => Ok("a filtered process is in mode 2".into()),
        other => Err(format!("a filtered process reports seccomp mode {other:?}")),
    }
}

/// Rlimits: limits set in a child hold after exec. For a root host, whom
/// RLIMIT_NPROC does not bind, the process limit also needs a PID namespace
/// with its own pid_max (Linux 6.14).
fn rlimits() -> Probed {
    let limits = run("cat", &["/proc/self/limits"], |cmd| {
        // SAFETY: only setrlimit, which is async-signal-safe, between fork
        // and exec.
        unsafe {
            cmd.pre_exec(|| {
                for (resource, value) in [
                    (libc::RLIMIT_NPROC, 64),
                    (libc::RLIMIT_FSIZE, 1 << 20),
                    (libc::RLIMIT_CORE, 0),
                    (libc::RLIMIT_CPU, 60),
                ] {
                    let limit = libc::rlimit {
                        rlim_cur: value,
                        rlim_max: value,
                    };
                    if libc::setrlimit(resource, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    })?;
    for (name, value) in [
        ("Max processes", "64"),
        ("Max file size", "1048576"),
        ("Max core file size", "0"),
        ("Max cpu time", "60"),
    ] {
        let line = limits.lines().find(|l| l.starts_with(name));
        let fields: Vec<&str> = line
            .and_then(|l| l.strip_prefix(name))
            .map(|rest| rest.split_whitespace().take(2).collect())
            .unwrap_or_default();
        if fields != [value, value] {
            return Err(format!("{name} after exec: {line:?}"));
        }
    }
    if euid() != 0 {
        return Ok("NPROC, FSIZE, CORE and CPU hold".into());
    }
    namespaced_pid_max()
}

/// Whether a PID namespace gets its own pid_max. Tried only from Linux 6.14:
/// before, there is one pid_max, and root writing it in a namespace would
/// change the machine's.
fn namespaced_pid_max() -> Probed {
    let release =
        std::fs::read_to_string("/proc/sys/kernel/osrelease").map_err(|e| e.to_string())?;
    let version: Vec<u32> = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .take(2)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    if version < vec![6, 14] {
        return Err(format!(
            "Linux {}: no per-namespace pid_max to bound root's processes",
            release.trim()
        ));
    }
    let host_pid_max = || std::fs::read_to_string("/proc/sys/kernel/pid_max");
    let before = host_pid_max().map_err(|e| e.to_string())?;
    let inside = unshared(&[
        "--pid",
        "--fork",
        "--mount-proc",
        "sh",
        "-c",
        "echo 364 > /proc/sys/kernel/pid_max && cat /proc/sys/kernel/pid_max",
    ]);
    let after = host_pid_max().map_err(|e| e.to_string())?;
    assert_eq!(before, after, "the probe changed the machine's pid_max");
    match inside?.trim() {
        "364" => Ok("root's processes bounded by the namespace's pid_max".into()),
        other => Err(format!("the namespace's pid_max stayed {other}")),
    }
}
