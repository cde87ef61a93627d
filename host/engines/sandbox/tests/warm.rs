//! The warm sandbox: one resident process per session holds the
//! namespaces and the root, and starts every command inside them. These
//! tests find it in the process tree and try what a resident could get
//! wrong: a cover of a protected path lost when the host replaces the file,
//! calls that see or signal each other, a resident that dies mid-call.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use kaizen_sandbox::Sandbox;

/// The parent PID of a host process.
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(") ").next()?.split(' ').nth(1)?.parse().ok()
}

/// The resident process of the command with `marker`: its parent (the
/// command, `sleep` as PID 1 of its namespaces, is cloned by the resident
/// directly).
async fn resident_of(marker: &str) -> i32 {
    let pid = wait_present(marker).await[0];
    let resident = parent(pid).expect("the command is gone");
    // The resident's intermediate and the spawner come next: the host is
    // the spawner's parent.
    let spawner = parent(parent(resident).expect("no resident intermediate"));
    assert_eq!(
        spawner.and_then(parent),
        Some(std::process::id() as i32),
        "the command does not run under a resident process"
    );
    resident
}

#[tokio::test]
async fn one_resident_process_serves_every_call_and_no_call_sees_it() {
    let (_ws, sb) = sandbox();
    let first = marker_sleep();
    let job = sb.spawn("bash", &format!("sleep {first}")).await.unwrap();
    let resident = resident_of(&first).await;
    for _ in 0..3 {
        // PID 1 is the command itself; nothing else of the session is in
        // its /proc, neither the resident nor the job.
        let out = sh(
            &sb,
            "echo $$; cat /proc/1/comm; ls /proc | grep -c '^[0-9]'",
        )
        .await;
        let text = text(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "1", "{text}");
        assert_eq!(lines[1], "bash", "{text}");
        assert!(
            lines[2].parse::<u32>().unwrap() <= 4,
            "another process is visible: {text}"
        );
    }
    let second = marker_sleep();
    let other = sb.spawn("bash", &format!("sleep {second}")).await.unwrap();
    assert_eq!(
        resident_of(&second).await,
        resident,
        "one resident per session"
    );
    sb.kill_job(&job).await.unwrap();
    sb.kill_job(&other).await.unwrap();
}

/// A command runs `kill -9 -1` and `kill -9 1` while a job of the session
/// runs: the job and the resident live on.
#[tokio::test]
async fn a_call_cannot_signal_the_resident_or_another_calls_processes() {
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    let job = sb.spawn("bash", &format!("sleep {marker}")).await.unwrap();
    let resident = resident_of(&marker).await;
    let out = sh(&sb, "kill -9 -1; kill -9 1; echo survived").await;
    // `kill -9 1` kills the call's own PID 1: the call ends by signal.
    assert_ne!(text(&out), "survived\n", "{out:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!host_pids(&marker).is_empty(), "the job was killed");
    assert_eq!(resident_of(&marker).await, resident);
    still_works(&sb).await;
    sb.kill_job(&job).await.unwrap();
}

/// A protected file that the host replaces by rename, as editors save,
/// loses its cover in every other mount namespace: the resident's root
/// must be built again, not serve the new file unprotected.
#[tokio::test]
async fn a_protected_file_the_host_replaces_stays_protected() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let protected = root.join("settings.json");
    let hidden = root.join(".env");
    std::fs::write(&protected, "original").unwrap();
    std::fs::write(&hidden, "SECRET=one").unwrap();
    let mut policy = policy(&root);
    policy.protect = vec![protected.clone()];
    policy.hide = vec![hidden.clone()];
    let sb = Sandbox::new(policy).unwrap();
    let attempt = "echo changed > settings.json; cat .env";
    let out = sh(&sb, attempt).await;
    assert!(!text(&out).contains("SECRET"), "{out:?}");
    for round in 0..2 {
        replace(&protected, &format!("replaced {round}"));
        replace(&hidden, &format!("SECRET=two{round}"));
        let out = sh(&sb, attempt).await;
        assert!(!text(&out).contains("SECRET"), "round {round}: {out:?}");
        assert_eq!(
            std::fs::read_to_string(&protected).unwrap(),
            format!("replaced {round}"),
            "round {round}: the replaced file was written: {out:?}"
        );
    }
    still_works(&sb).await;
}

/// Writes `content` to a new file beside `path` and renames it over `path`.
fn replace(path: &Path, content: &str) {
    let new = path.with_extension("new");
    std::fs::write(&new, content).unwrap();
    std::fs::rename(&new, path).unwrap();
}

#[tokio::test]
async fn a_resident_killed_mid_call_ends_the_call_and_the_next_call_gets_a_new_one() {
    kill_helper_mid_call("resident process", |marker| async move {
        resident_of(&marker).await
    })
    .await;
}

/// A directory outside the grant does not exist in the resident's root:
/// the command starts in the workspace, as in a root of its own.
#[tokio::test]
async fn a_working_directory_outside_the_grant_starts_in_the_workspace() {
    let (ws, sb) = sandbox();
    let outside = tempfile::tempdir().unwrap();
    let out = sb
        .run(kaizen_sandbox::Command {
            program: "pwd".into(),
            cwd: Some(outside.path().to_path_buf()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        text(&out).trim_end(),
        ws.path().canonicalize().unwrap().to_str().unwrap()
    );
}
