//! Helpers shared by the sandbox tests: policies, shell shorthands, and
//! finding a session's processes from the host by a unique marker argument.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kaizen_sandbox::{Limits, Output, Policy, Sandbox};

/// Generous limit for commands that should finish at once: only a safety net.
pub const SAFETY_TIMEOUT: Duration = Duration::from_secs(60);

/// A policy granting `workspace` read-write and nothing else.
pub fn policy(workspace: &Path) -> Policy {
    Policy {
        writable: vec![workspace.to_path_buf()],
        readable: Vec::new(),
        network: false,
        env: Vec::new(),
        protect: Vec::new(),
        hide: Vec::new(),
        no_exec: Vec::new(),
        limits: Limits::default(),
        allow_degraded: false,
    }
}

/// A sandbox over a fresh workspace (kept alive by the returned TempDir).
pub fn sandbox() -> (tempfile::TempDir, Sandbox) {
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(policy(ws.path())).unwrap();
    (ws, sb)
}

/// Runs a script in the shell "bash".
pub async fn sh(sb: &Sandbox, script: &str) -> Output {
    sb.shell_run("bash", script, Some(SAFETY_TIMEOUT))
        .await
        .unwrap()
}

/// Everything job `id` prints until it ends: each read takes what came
/// since the last one, so all of them are kept.
pub async fn read_job_to_end(sb: &Sandbox, id: &str) -> String {
    let mut out = String::new();
    loop {
        let read = sb.read_job(id).unwrap();
        out.push_str(&String::from_utf8_lossy(&read.stdout));
        if read.state != kaizen_sandbox::JobState::Running {
            return out;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// stdout as text.
pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The sandbox still runs commands after an attempt.
pub async fn still_works(sb: &Sandbox) {
    let out = sh(sb, "echo still-alive").await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(text(&out), "still-alive\n");
}

/// A number unique to this test process and call, for marker arguments.
pub fn unique() -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "{}{:03}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A `sleep` duration that doubles as a marker: `100.<unique>` seconds.
pub fn marker_sleep() -> String {
    format!("100.{}", unique())
}

/// Host PIDs of live (non-zombie) processes whose command line contains `marker`.
pub fn host_pids(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let dir: PathBuf = entry.path();
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(dir.join("stat"))
            .map(|s| {
                s.rsplit(") ")
                    .next()
                    .is_some_and(|rest| rest.starts_with('Z'))
            })
            .unwrap_or(true);
        if cmdline.contains(marker) && !zombie && pid != std::process::id() as i32 {
            pids.push(pid);
        }
    }
    pids
}

/// Waits (bounded) until a process with `marker` runs; returns its PIDs.
pub async fn wait_present(marker: &str) -> Vec<i32> {
    for _ in 0..400 {
        let pids = host_pids(marker);
        if !pids.is_empty() {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no process with marker {marker} appeared");
}

/// Waits (bounded) until no process with `marker` is left; false if some stay.
pub async fn wait_gone(marker: &str) -> bool {
    for _ in 0..400 {
        if host_pids(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

/// The same as [`wait_gone`], without a runtime.
pub fn wait_gone_blocking(marker: &str) -> bool {
    for _ in 0..400 {
        if host_pids(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// Kills with SIGKILL, mid-call, the helper process (`what`: the spawner,
/// the resident) that `find` names from the marker of the call's command,
/// then checks what must follow: the call ends by SIGKILL, nothing it
/// started outlives it, and the next call runs under a new helper.
pub async fn kill_helper_mid_call<F, Fut>(what: &str, find: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = i32>,
{
    let (ws, sb) = sandbox();
    let marker = marker_sleep();
    let script = format!("(sleep 1; touch late) & sleep {marker}");
    let call = sb.shell_run("bash", &script, None);
    tokio::pin!(call);
    let helper = tokio::select! {
        out = &mut call => panic!("the call ended early: {out:?}"),
        pid = find(marker.clone()) => pid,
    };
    // SAFETY: kill(2) on a process of this test's own session.
    assert_eq!(unsafe { libc::kill(helper, libc::SIGKILL) }, 0);
    let out = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap_or_else(|_| panic!("the call outlived its {what}"))
        .unwrap();
    assert_eq!(out.signal, Some(9), "{out:?}");
    assert!(wait_gone(&marker).await, "the command outlived its {what}");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(
        !ws.path().join("late").exists(),
        "a process outlived its {what}"
    );
    let next = marker_sleep();
    let job = sb.spawn("bash", &format!("sleep {next}")).await.unwrap();
    assert_ne!(find(next).await, helper, "no new {what}");
    sb.kill_job(&job).await.unwrap();
    still_works(&sb).await;
}
