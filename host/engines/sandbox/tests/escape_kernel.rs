//! System calls and resource limits: denied calls fail, limits contain
//! storms and huge files, and the next command still works.

mod common;

use common::*;
use kaizen_sandbox::{Limits, Sandbox};

/// System call numbers for the probes, per architecture.
#[cfg(target_arch = "x86_64")]
mod nr {
    pub const PTRACE: u32 = 101;
    pub const MOUNT: u32 = 165;
    pub const UNSHARE: u32 = 272;
    pub const SETNS: u32 = 308;
    pub const CLONE: u32 = 56;
    pub const CLONE3: u32 = 435;
    pub const BPF: u32 = 321;
    pub const KEYCTL: u32 = 250;
    pub const IO_URING_SETUP: u32 = 425;
    pub const INIT_MODULE: u32 = 175;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const PTRACE: u32 = 117;
    pub const MOUNT: u32 = 40;
    pub const UNSHARE: u32 = 97;
    pub const SETNS: u32 = 268;
    pub const CLONE: u32 = 220;
    pub const CLONE3: u32 = 435;
    pub const BPF: u32 = 280;
    pub const KEYCTL: u32 = 219;
    pub const IO_URING_SETUP: u32 = 425;
    pub const INIT_MODULE: u32 = 105;
}

/// Makes a system call through perl and prints its errno text (or "allowed").
/// String arguments are `$s1` ("none"), `$s2` ("/tmp"), `$s3` ("tmpfs"):
/// perl refuses literals, which a system call might write into.
fn syscall_probe(args: &str) -> String {
    format!(
        "perl -e 'my ($s1, $s2, $s3) = (\"none\", \"/tmp\", \"tmpfs\"); $! = 0; my $r = syscall({args}); if ($r == -1) {{ print \"denied: $!\\n\" }} else {{ print \"allowed\\n\"; exit 0 }}'"
    )
}

async fn assert_syscall_denied(sb: &Sandbox, what: &str, args: &str, expect: &str) {
    let out = sh(sb, &syscall_probe(args)).await;
    assert_eq!(
        text(&out).trim(),
        format!("denied: {expect}"),
        "{what}: {out:?}"
    );
    still_works(sb).await;
}

#[tokio::test]
async fn dangerous_system_calls_are_denied() {
    let (_ws, sb) = sandbox();
    let eperm = "Operation not permitted";
    // PTRACE_TRACEME would succeed for any process without the filter.
    assert_syscall_denied(&sb, "ptrace", &format!("{}, 0, 0, 0, 0", nr::PTRACE), eperm).await;
    assert_syscall_denied(
        &sb,
        "mount",
        &format!("{}, $s1, $s2, $s3, 0, 0", nr::MOUNT),
        eperm,
    )
    .await;
    assert_syscall_denied(
        &sb,
        "unshare",
        &format!("{}, 0x10000000", nr::UNSHARE),
        eperm,
    )
    .await;
    assert_syscall_denied(&sb, "setns", &format!("{}, 0, 0", nr::SETNS), eperm).await;
    // clone asking for a new user namespace (plus SIGCHLD as exit signal).
    assert_syscall_denied(
        &sb,
        "clone",
        &format!("{}, 0x10000011, 0, 0, 0, 0", nr::CLONE),
        eperm,
    )
    .await;
    assert_syscall_denied(
        &sb,
        "clone3",
        &format!("{}, 0, 0", nr::CLONE3),
        "Function not implemented",
    )
    .await;
    assert_syscall_denied(&sb, "bpf", &format!("{}, 0, 0, 0", nr::BPF), eperm).await;
    assert_syscall_denied(&sb, "keyctl", &format!("{}, 0, 0, 0, 0", nr::KEYCTL), eperm).await;
    assert_syscall_denied(
        &sb,
        "io_uring_setup",
        &format!("{}, 1, 0", nr::IO_URING_SETUP),
        eperm,
    )
    .await;
    assert_syscall_denied(
        &sb,
        "init_module",
        &format!("{}, 0, 0, 0", nr::INIT_MODULE),
        eperm,
    )
    .await;
    // Ordinary process creation still works.
    let out = sh(&sb, "echo a | cat | tr a b; (exit 4); echo $?").await;
    assert_eq!(text(&out), "b\n4\n");
}

#[tokio::test]
async fn tools_that_need_denied_calls_fail_cleanly() {
    let (_ws, sb) = sandbox();
    for script in [
        "unshare -U true",
        "mount -t tmpfs none \"$HOME\"",
        "strace -o /dev/null true",
    ] {
        let out = sh(&sb, script).await;
        assert_ne!(out.exit_code, Some(0), "{script} succeeded: {}", text(&out));
        still_works(&sb).await;
    }
    // No capabilities are left to use.
    let out = sh(&sb, "grep CapEff /proc/self/status").await;
    assert_eq!(
        text(&out).split_whitespace().nth(1),
        Some("0000000000000000")
    );
}

#[tokio::test]
async fn fork_storm_is_contained() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.limits = Limits {
        max_processes: 64,
        ..Limits::default()
    };
    let sb = Sandbox::new(p).unwrap();
    // perl's fork does not retry on EAGAIN (bash's would, for 15 s).
    let storm = "perl -e 'for my $i (1..5000) { my $p = fork; if (!defined $p) { print \"blocked at $i\\n\"; exit 0 } if ($p == 0) { sleep 60; exit 0 } } print \"unbounded\\n\"'";
    let out = sh(&sb, storm).await;
    let line = text(&out);
    let n: u64 = line
        .trim()
        .strip_prefix("blocked at ")
        .unwrap_or_else(|| panic!("storm not contained: {line}"))
        .parse()
        .unwrap();
    // RLIMIT_NPROC stops it at 64 for a normal user; a root host (exempt from
    // it) is stopped by the namespace's pid_max, 300 higher.
    assert!(n <= 64 + 300, "blocked only at {n}");
    still_works(&sb).await;
}

#[tokio::test]
async fn file_size_limit_stops_a_huge_file() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.limits = Limits {
        max_file_size: 1 << 20,
        ..Limits::default()
    };
    let sb = Sandbox::new(p).unwrap();
    let out = sh(&sb, "head -c 10000000 /dev/zero > big; echo rc=$?").await;
    // head dies of SIGXFSZ: 128 + 25.
    assert!(text(&out).contains("rc=153"), "{}", text(&out));
    assert_eq!(
        std::fs::metadata(ws.path().join("big")).unwrap().len(),
        1 << 20
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn huge_output_is_capped() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.limits = Limits {
        max_output_bytes: 64 * 1024,
        ..Limits::default()
    };
    let sb = Sandbox::new(p).unwrap();
    let out = sh(
        &sb,
        "echo first-line; head -c 20000000 /dev/zero | tr '\\0' a; echo; echo last-line",
    )
    .await;
    assert!(out.truncated);
    assert_eq!(out.exit_code, Some(0));
    assert!(
        out.stdout.len() < 64 * 1024 + 100,
        "{} bytes kept",
        out.stdout.len()
    );
    let s = text(&out);
    assert!(s.starts_with("first-line\n"));
    assert!(s.ends_with("last-line\n"));
    assert!(s.contains("bytes omitted"));
    // The same for a plain run, on stderr.
    let out = sb
        .run(kaizen_sandbox::Command {
            program: "sh".into(),
            args: vec!["-c".into(), "head -c 1000000 /dev/zero >&2".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(out.truncated && out.stderr.len() < 64 * 1024 + 100 && out.stdout.is_empty());
    still_works(&sb).await;
}
