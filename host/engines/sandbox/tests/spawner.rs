//! The session's spawner: a small process that starts the sandbox's
//! processes for the host. These tests find it in the process tree and try
//! what could go wrong with it: it carries the host's environment, it dies
//! mid-call, it outlives its sandbox, a request does not fit its socket.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use std::time::Duration;

use common::*;
use kaizen_sandbox::Command;

/// `(parent PID, command line)` of a host process.
fn proc_info(pid: i32) -> Option<(i32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ppid = stat.rsplit(") ").next()?.split(' ').nth(1)?.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some((ppid, String::from_utf8_lossy(&cmdline).replace('\0', " ")))
}

/// The spawner that started the process with `marker`: the ancestor that
/// is this test process's child, checked to be a spawner (the
/// intermediate between them is a fork of it, with its command line).
async fn spawner_of(marker: &str) -> i32 {
    let pids = wait_present(marker).await;
    let mut pid = pids[0];
    for _ in 0..8 {
        let (ppid, cmdline) = proc_info(pid).expect("the process is gone");
        if ppid == std::process::id() as i32 {
            assert!(
                cmdline.starts_with("kaizen-sandbox-spawner --kaizen-sandbox-spawner"),
                "the host started {cmdline:?} itself"
            );
            return pid;
        }
        pid = ppid;
    }
    panic!("the process of {marker} does not descend from this host");
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')))
}

#[tokio::test]
async fn a_sessions_processes_come_from_one_spawner_with_nothing_of_the_hosts_environment() {
    let (_ws, sb) = sandbox();
    let first = marker_sleep();
    let job = sb.spawn("bash", &format!("sleep {first}")).await.unwrap();
    let spawner = spawner_of(&first).await;
    let second = marker_sleep();
    sb.spawn("bash", &format!("sleep {second}")).await.unwrap();
    assert_eq!(
        spawner_of(&second).await,
        spawner,
        "one spawner per session"
    );
    // The host's environment (PATH at least) stays with the host.
    assert!(std::env::var_os("PATH").is_some());
    let environ = std::fs::read(format!("/proc/{spawner}/environ")).unwrap();
    assert!(environ.is_empty(), "{}", String::from_utf8_lossy(&environ));
    sb.kill_job(&job).await.unwrap();
}

#[tokio::test]
async fn a_spawner_killed_mid_call_ends_the_call_and_the_next_call_gets_a_new_one() {
    kill_helper_mid_call("spawner", |marker| async move { spawner_of(&marker).await }).await;
}

#[tokio::test]
async fn dropping_the_sandbox_ends_its_spawner() {
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    sb.spawn("bash", &format!("sleep {marker}")).await.unwrap();
    let spawner = spawner_of(&marker).await;
    drop(sb);
    assert!(wait_gone(&marker).await);
    let mut gone = false;
    for _ in 0..400 {
        if !alive(spawner) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(gone, "the spawner outlived its sandbox");
}

#[tokio::test]
async fn a_request_too_large_for_the_spawner_still_runs_in_the_sandbox() {
    let (ws, sb) = sandbox();
    // 3 × 100 KB of environment: more than one message to the spawner
    // holds, within what exec takes.
    let big = "x".repeat(100 * 1024);
    let env = (0..3).map(|i| (format!("BIG{i}"), big.clone())).collect();
    let out = sb
        .run(Command {
            program: "bash".into(),
            args: vec!["-c".into(), "echo ${#BIG0} ${#BIG2} $$; touch made".into()],
            env,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    // PID 1: still in a PID namespace of its own.
    assert_eq!(text(&out), "102400 102400 1\n");
    assert!(ws.path().join("made").exists());
}

#[tokio::test]
async fn many_calls_at_once_each_get_their_own_answer() {
    let (_ws, sb) = sandbox();
    let sb = std::sync::Arc::new(sb);
    let calls = (0..12).map(|i| {
        let sb = sb.clone();
        tokio::spawn(async move {
            let out = sb
                .run(Command {
                    program: "bash".into(),
                    args: vec!["-c".into(), format!("echo {i}; exit {i}")],
                    ..Default::default()
                })
                .await
                .unwrap();
            (i, out)
        })
    });
    for call in calls {
        let (i, out) = call.await.unwrap();
        assert_eq!(out.exit_code, Some(i), "{out:?}");
        assert_eq!(text(&out), format!("{i}\n"));
    }
}

#[tokio::test]
async fn a_call_dropped_before_it_ends_takes_its_processes_with_it() {
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    let script = format!("sleep {marker}");
    let mut call = Box::pin(sb.shell_run("bash", &script, None));
    tokio::select! {
        out = &mut call => panic!("the call ended early: {out:?}"),
        _ = wait_present(&marker) => {}
    }
    // The caller gives up on the call (a cancelled tool call).
    drop(call);
    assert!(
        wait_gone(&marker).await,
        "the process outlived its dropped call: {:?}",
        host_pids(&marker)
    );
    still_works(&sb).await;
}
