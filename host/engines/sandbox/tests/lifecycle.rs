//! Nothing a session started outlives its timeout, its job's kill, the
//! sandbox's shutdown or drop, or the host process itself.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use std::io::BufRead;
use std::time::{Duration, Instant};

use common::*;
use kaizen_sandbox::{JobState, ProcessError, Sandbox};

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let (ws, sb) = sandbox();
    let marker = marker_sleep();
    let started = Instant::now();
    // A grandchild that would touch the file after one second, and a
    // long sleep that carries the marker.
    let script = format!("(sleep 1; touch touched) & sleep {marker}");
    let out = sb
        .shell_run("bash", &script, Some(Duration::from_millis(200)))
        .await
        .unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.signal, Some(9));
    assert!(wait_gone(&marker).await, "the sleep survived the timeout");
    // Past the moment the grandchild would have touched the file.
    if let Some(rest) = Duration::from_millis(1500).checked_sub(started.elapsed()) {
        tokio::time::sleep(rest).await;
    }
    assert!(
        !ws.path().join("touched").exists(),
        "a grandchild survived the timeout"
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn background_jobs_stream_output_and_exit() {
    let (ws, sb) = sandbox();
    let id = sb
        .spawn("bash", "echo first; echo oops >&2; while [ ! -e go ]; do sleep 0.02; done; echo second; exit 7")
        .await
        .unwrap();
    assert_eq!(id, "bash_1");
    // Read until the first line arrives.
    let mut seen = String::new();
    let mut errs = String::new();
    for _ in 0..400 {
        let read = sb.read_job(&id).unwrap();
        assert_eq!(read.state, JobState::Running);
        seen.push_str(&String::from_utf8_lossy(&read.stdout));
        errs.push_str(&String::from_utf8_lossy(&read.stderr));
        if seen.contains("first") && errs.contains("oops") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen, "first\n");
    assert_eq!(errs, "oops\n");
    // Foreground commands go on meanwhile.
    still_works(&sb).await;
    std::fs::write(ws.path().join("go"), "").unwrap();
    let mut rest = String::new();
    let mut state = JobState::Running;
    for _ in 0..400 {
        let read = sb.read_job(&id).unwrap();
        rest.push_str(&String::from_utf8_lossy(&read.stdout));
        state = read.state;
        if state != JobState::Running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Output already read is not repeated.
    assert_eq!(rest, "second\n");
    assert_eq!(state, JobState::Exited(7));
    let again = sb.read_job(&id).unwrap();
    assert!(again.stdout.is_empty() && again.stderr.is_empty());
    assert_eq!(again.state, JobState::Exited(7));
}

#[tokio::test]
async fn jobs_start_where_the_shell_is() {
    let (_ws, sb) = sandbox();
    sh(&sb, "mkdir -p sub && cd sub && export JOBVAR=inherited").await;
    let id = sb.spawn("bash", "pwd; echo $JOBVAR").await.unwrap();
    let out = read_job_to_end(&sb, &id).await;
    assert!(out.ends_with("/sub\ninherited\n"), "{out}");
}

#[tokio::test]
async fn kill_job_ends_it_and_unknown_ids_are_named() {
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    let id = sb
        .spawn(
            "bash",
            &format!("sleep {marker} & sleep {marker}; echo never"),
        )
        .await
        .unwrap();
    wait_present(&marker).await;
    sb.kill_job(&id).await.unwrap();
    let read = sb.read_job(&id).unwrap();
    assert_eq!(read.state, JobState::Killed);
    assert!(read.stdout.is_empty());
    assert!(wait_gone(&marker).await, "the job survived kill_job");

    match sb.read_job("bash_99") {
        Err(ProcessError::UnknownId(msg)) => {
            assert!(msg.contains("bash_99") && msg.contains(&id), "{msg}")
        }
        other => panic!("expected UnknownId, got {other:?}"),
    }
    assert!(matches!(
        sb.kill_job("nope").await,
        Err(ProcessError::UnknownId(_))
    ));
    still_works(&sb).await;
}

#[tokio::test]
async fn job_output_is_bounded_while_unread() {
    let ws = tempfile::tempdir().unwrap();
    let mut p = policy(ws.path());
    p.limits.max_output_bytes = 1000;
    let sb = Sandbox::new(p).unwrap();
    let id = sb
        .spawn(
            "bash",
            "for i in $(seq 1000); do echo line-$i; done; touch printed",
        )
        .await
        .unwrap();
    // Unread until all 8893 bytes are written: a read meanwhile would make
    // room for more.
    let printed = ws.path().join("printed");
    for _ in 0..400 {
        if printed.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(printed.exists(), "the job never finished printing");
    let out = read_job_to_end(&sb, &id).await;
    assert!(out.ends_with("line-1000\n"), "{out}");
    assert!(out.contains("earlier bytes dropped"), "{out}");
    // What was left in the pipe comes in one more piece at most.
    assert!(out.len() < 3000, "{} bytes", out.len());
}

#[tokio::test]
async fn shutdown_leaves_nothing_running() {
    let (_ws, sb) = sandbox();
    let (a, b) = (marker_sleep(), marker_sleep());
    sb.spawn("bash", &format!("sleep {a}")).await.unwrap();
    sb.spawn("bash", &format!("sleep {b} & wait"))
        .await
        .unwrap();
    wait_present(&a).await;
    wait_present(&b).await;
    sb.shutdown().await;
    assert!(
        wait_gone(&a).await && wait_gone(&b).await,
        "jobs survived shutdown"
    );
    let read = sb.read_job("bash_1").unwrap();
    assert_eq!(read.state, JobState::Killed);
}

#[tokio::test]
async fn dropping_the_sandbox_kills_everything() {
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    sb.spawn("bash", &format!("sleep {marker}")).await.unwrap();
    wait_present(&marker).await;
    let temp = sb.temp_dir().to_path_buf();
    drop(sb);
    assert!(
        wait_gone(&marker).await,
        "a job survived dropping the sandbox"
    );
    assert!(!temp.exists(), "the private temp dir was not removed");
}

#[test]
fn dropping_without_a_runtime_still_kills() {
    let marker = marker_sleep();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_ws, sb) = sandbox();
    rt.block_on(async {
        sb.spawn("bash", &format!("sleep {marker}")).await.unwrap();
        wait_present(&marker).await;
    });
    // The runtime (and the job's collecting task) goes first: Drop must
    // still kill synchronously.
    drop(rt);
    drop(sb);
    assert!(wait_gone_blocking(&marker), "a job survived");
}

/// Environment variables that make `host_death_kills_everything` the host
/// it kills: the marker for its processes, and the workspace the parent made
/// for it.
const HELPER_MARKER: &str = "KAIZEN_SANDBOX_TEST_HOST_MARKER";
const HELPER_WORKSPACE: &str = "KAIZEN_SANDBOX_TEST_HOST_WORKSPACE";

/// Host PIDs of the `sleep <marker>` processes themselves: the shells
/// around them carry the marker too, and so does a shell forked to run one
/// before it has exec'd.
fn sleeps(marker: &str) -> Vec<i32> {
    let exact = format!("sleep\0{marker}\0");
    host_pids(marker)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == exact.as_bytes())
        })
        .collect()
}

/// The host that `host_death_kills_everything` kills: runs a job and a
/// foreground command carrying `marker`, and once both run reports ready,
/// with the private directory this host will not live to remove.
fn be_the_killed_host(marker: &str, ws: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let sb = Sandbox::new(policy(std::path::Path::new(ws))).unwrap();
        sb.spawn("bash", &format!("sleep {marker}")).await.unwrap();
        let script = format!("sleep {marker}");
        let foreground = sb.shell_run("bash", &script, None);
        tokio::pin!(foreground);
        // The foreground command only starts while it is polled: poll it
        // until the host sees both commands.
        let both_run = async {
            for _ in 0..400 {
                if sleeps(marker).len() == 2 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            panic!("the commands never ran: {:?}", host_pids(marker));
        };
        tokio::select! {
            out = &mut foreground => panic!("the foreground command ended: {out:?}"),
            () = both_run => {}
        }
        println!("READY {}", sb.temp_dir().parent().unwrap().display());
        foreground.await.unwrap();
    });
}

/// Kills a host (this test binary, run again as [`be_the_killed_host`])
/// while its sandboxed commands run.
#[test]
fn host_death_kills_everything() {
    if let (Ok(marker), Ok(ws)) = (
        std::env::var(HELPER_MARKER),
        std::env::var(HELPER_WORKSPACE),
    ) {
        // Only the parent below sets these: this process is its host.
        be_the_killed_host(&marker, &ws);
        return;
    }
    let marker = marker_sleep();
    let ws = tempfile::tempdir().unwrap();
    let mut helper = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "host_death_kills_everything",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_MARKER, &marker)
        .env(HELPER_WORKSPACE, ws.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = helper.stdout.take().unwrap();
    let private_dir = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // libtest prints "test host_death_kills_everything ... " on the
        // same line.
        .find_map(|l| {
            l.split_once("READY ")
                .map(|(_, dir)| std::path::PathBuf::from(dir))
        })
        .expect("the helper host never got ready");
    let running = sleeps(&marker);
    assert_eq!(running.len(), 2, "both commands run: {running:?}");
    helper.kill().unwrap();
    helper.wait().unwrap();
    assert!(
        wait_gone_blocking(&marker),
        "processes outlived their host: {:?}",
        host_pids(&marker)
    );
    assert!(private_dir.starts_with(std::env::temp_dir()));
    // The first sandbox of any other host (another test binary running at
    // the same time) sweeps it as stale: it may be gone already.
    match std::fs::remove_dir_all(&private_dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            panic!("removing {}: {e}", private_dir.display())
        }
        _ => {}
    }
}

#[tokio::test]
async fn an_attached_program_talks_on_its_pipes_and_dies_with_its_handle() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (_ws, sb) = sandbox();
    let marker = marker_sleep();
    // Echoes each line back, says something on stderr, and leaves a
    // grandchild that must die with it.
    let script =
        format!("sleep {marker} & echo ready >&2; while read -r line; do echo \"got $line\"; done");
    let mut attached = sb
        .attach(kaizen_sandbox::Command {
            program: "/bin/bash".into(),
            args: vec!["-c".into(), script],
            ..Default::default()
        })
        .unwrap();
    let (mut stdin, stdout) = attached.take_pipes().unwrap();
    assert!(attached.take_pipes().is_none(), "the pipes are taken once");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    stdin.write_all(b"one\ntwo\n").await.unwrap();
    assert_eq!(lines.next_line().await.unwrap().unwrap(), "got one");
    assert_eq!(lines.next_line().await.unwrap().unwrap(), "got two");
    // stderr is collected by a task of its own: wait (bounded) for it.
    let mut stderr = String::new();
    for _ in 0..400 {
        let read = attached.read_stderr();
        assert_eq!(read.state, JobState::Running);
        assert!(read.stdout.is_empty());
        stderr.push_str(&String::from_utf8_lossy(&read.stderr));
        if !stderr.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(stderr, "ready\n");
    wait_present(&marker).await;
    drop(attached);
    assert!(
        wait_gone(&marker).await,
        "the grandchild outlived its handle"
    );
    // The pipe saw the end too.
    assert!(lines.next_line().await.unwrap().is_none());
    still_works(&sb).await;
}

#[tokio::test]
async fn an_attached_program_that_exits_reports_its_code() {
    let (_ws, sb) = sandbox();
    let attached = sb
        .attach(kaizen_sandbox::Command {
            program: "/bin/bash".into(),
            args: vec!["-c".into(), "echo bye >&2; exit 3".into()],
            ..Default::default()
        })
        .unwrap();
    attached.wait().await;
    let read = attached.read_stderr();
    assert_eq!(read.state, JobState::Exited(3));
    assert_eq!(String::from_utf8_lossy(&read.stderr), "bye\n");
    let missing = sb.attach(kaizen_sandbox::Command {
        program: "no-such-program-here".into(),
        ..Default::default()
    });
    assert!(
        matches!(missing, Err(ProcessError::NotFound(_))),
        "{missing:?}"
    );
}
