//! `kaizen worker` and `kaizen run --cluster` on the real Restate server
//! (from npm, under the target directory), with the scripted model server
//! and the built-in tools in the real sandbox, and two workers behind a
//! load balancer: a session's turn is sent to the cluster, the worker
//! running it is killed with SIGKILL while a Bash step runs (or while the
//! turn waits for an approval), the other takes over, and the submitter
//! prints the same events and result a local run prints, with no finished
//! step run twice, the cut step reported once and the approval honoured.
//!
//! Each test re-runs itself in a network namespace of its own, with only
//! loopback: the server looks for updates on the network at start.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::cluster::{Cluster, finished, output_of, runs, started};
use common::run::{bash, call_fields, results_sent};
use common::terminal::Terminal;
use kaizen_model_server::{Reply, Script};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_survives_its_worker_and_prints_as_a_local_run() {
    let script = Script::new()
        .reply(bash("echo a >> runs-a").with_usage(100, 10))
        .reply(bash("echo b >> runs-b; sleep 4; echo slept").with_usage(100, 10))
        .reply(Reply::text("done").with_usage(100, 10));
    let test = "a_turn_survives_its_worker_and_prints_as_a_local_run";
    let Some(mut cluster) = Cluster::isolated(test, script).await else {
        return;
    };
    let ws = cluster.ws();
    let submitted = cluster.submit_in_background("count a, then b");

    // The worker running the turn is lost while the second Bash step
    // runs; the engine gives the turn to the other.
    cluster
        .wait_for_runs("the second Bash step", "runs-b", 1)
        .await;
    let lost = cluster.kill_busy_worker();
    let (server, run) = (&cluster.server, &cluster.run);
    assert_eq!(runs(&ws, "runs-a"), 1);
    assert_eq!(server.requests().len(), 2);

    let out = finished(submitted).await;
    let (events, stdout) = cluster.ended(&out, 0);
    assert!(
        cluster.log_of(1 - lost).contains("turn ended complete"),
        "{}",
        cluster.worker_log()
    );
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["output"], "done");
    assert_eq!(result["cycles_used"], 3);
    // Each model call counted once: three calls of 100 and 10 tokens.
    assert_eq!(result["tokens_used"]["input"], 300, "{result:#}");
    assert_eq!(result["tokens_used"]["output"], 30);
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(
        call_fields(result, "status"),
        ["success", "error"],
        "{result:#}"
    );
    let cut = serde_json::to_string(&calls[1]).unwrap();
    assert!(cut.contains("cut off"), "{cut}");
    // No finished step ran again, and the cut one was not run again.
    assert_eq!(runs(&ws, "runs-a"), 1, "a finished Bash step ran again");
    assert_eq!(runs(&ws, "runs-b"), 1, "the cut Bash step ran again");
    assert_eq!(
        server.requests().len(),
        3,
        "a finished model call ran again"
    );

    // The submitter printed each event once, as a local run would.
    let id = result["session_id"].as_str().unwrap();
    let session_dir = run.home.path().join("sessions").join(id);
    let stream = std::fs::read_to_string(session_dir.join("stream.jsonl")).unwrap();
    let of_type = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(of_type("session_start"), 1, "{stdout}");
    assert_eq!(of_type("tool_call"), 2, "{stdout}");
    assert_eq!(of_type("tool_result"), 2, "{stdout}\nthe stream:\n{stream}");
    assert_eq!(of_type("result"), 1, "{stdout}");

    // The session is kept in the shared store, its log written once.
    let log = std::fs::read_to_string(session_dir.join("events.jsonl")).unwrap();
    let seqs: Vec<u64> = log
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "{log}");
    let listed = cluster.kaizen(&["sessions", "list", "--json"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(id),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
}

/// A request reaching a worker cannot send its keys and grants to work
/// anywhere on its machine: a turn whose workspace is outside the
/// worker's `--root` directories is refused, and nothing of it runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_outside_the_workers_roots_is_refused() {
    let script = Script::new().reply(bash("touch ran"));
    let test = "a_turn_outside_the_workers_roots_is_refused";
    let Some(cluster) = Cluster::isolated(test, script).await else {
        return;
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let out = output_of(started(cluster.submit_from(
        elsewhere.path(),
        "bypassPermissions",
        "go",
    )))
    .await;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("outside the directories this worker serves"),
        "{said}\n{}",
        cluster.worker_log()
    );
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(!elsewhere.path().join("ran").exists());
    assert!(cluster.server.requests().is_empty(), "the model was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_turn_through_the_engine() {
    let script = Script::new()
        .reply(bash("touch started; sleep 2"))
        .reply(Reply::text("never asked for"));
    let test = "ctrl_c_cancels_the_turn_through_the_engine";
    let Some(cluster) = Cluster::isolated(test, script).await else {
        return;
    };
    let ws = cluster.ws();
    let submitter = started(cluster.submit("wait"));
    let started = ws.join("started");
    cluster
        .wait_for("the Bash step", move || started.exists())
        .await;
    // Ctrl-C at the submitting terminal.
    let pid = libc::pid_t::try_from(submitter.id()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = output_of(submitter).await;
    let (events, stdout) = cluster.ended(&out, 130);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "interrupted", "{result:#}");
    // The turn ended at its step: the model was not asked again.
    assert_eq!(cluster.server.requests().len(), 1, "{stdout}");
    assert!(cluster.worker_log().contains("turn ended interrupted"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_answered_after_the_kill_is_honoured() {
    let script = Script::new()
        .reply(bash("touch approved"))
        .reply(bash("touch refused"))
        .reply(Reply::text("done"));
    let test = "an_approval_answered_after_the_kill_is_honoured";
    let Some(mut cluster) = Cluster::isolated(test, script).await else {
        return;
    };
    cluster.ask_before(&["touch approved", "touch refused"]);
    let ws = cluster.ws();
    let submitter = started(cluster.submit_in("default", "touch two files"));

    // The turn waits on the first approval; its worker is lost; the
    // other takes the turn up and waits on the same question, which is
    // answered now.
    cluster.wait_for_question("touch approved").await;
    let lost = cluster.kill_busy_worker();
    assert!(!ws.join("approved").exists());
    cluster
        .wait_for_logged(
            "the other worker to take the turn",
            &[1 - lost],
            "turn started",
        )
        .await;
    common::succeeded(&cluster.approve(&["--allow"]));

    // The other worker honours it, and the turn asks again.
    cluster.wait_for_question("touch refused").await;
    assert!(
        ws.join("approved").exists(),
        "the approved call did not run"
    );
    let listed = cluster.approve(&["--list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    common::succeeded(&cluster.approve(&["--deny", "make a note instead"]));

    let out = output_of(submitter).await;
    let (events, stdout) = cluster.ended(&out, 0);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["output"], "done");
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(
        call_fields(result, "status"),
        ["success", "denied"],
        "{result:#}"
    );
    let refusal = serde_json::to_string(&calls[1]).unwrap();
    assert!(refusal.contains("make a note instead"), "{refusal}");
    assert!(!ws.join("refused").exists());
    // One model call per step: the first came back from the journal.
    assert_eq!(cluster.server.requests().len(), 3, "{stdout}");
    // Nobody was at the submitter's terminal: it said how to answer.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("kaizen approve").count(), 2, "{stderr}");
    // Nothing waits now, and the session is marked as a cluster's.
    let nothing = cluster.approve(&["--allow"]);
    assert_eq!(nothing.status.code(), Some(1));
    let listed = cluster.kaizen(&["sessions", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("[cluster] touch two files"), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_submitting_terminal_answers_and_lets_go_of_what_was_answered_elsewhere() {
    let question = json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "PostgreSQL", "description": "a server"},
            {"label": "SQLite", "description": "a file"},
        ],
        "multiSelect": false,
    }]});
    let script = Script::new()
        .reply(bash("touch approved"))
        .reply(Reply::tool("AskUserQuestion", &question.to_string()))
        .reply(bash("touch elsewhere"))
        .reply(Reply::text("done"));
    let test = "the_submitting_terminal_answers_and_lets_go_of_what_was_answered_elsewhere";
    let Some(cluster) = Cluster::isolated(test, script).await else {
        return;
    };
    cluster.ask_before(&["touch approved", "touch elsewhere"]);
    let ws = cluster.ws();
    let mut terminal = Terminal::spawn(cluster.submit_in("default", "set up"));
    terminal.expect("Kaizen wants to run Bash");
    terminal.expect("touch approved");
    terminal.type_line("1");
    terminal.expect("Which database?");
    terminal.type_line("2");
    // The prompt itself (the event before it names the command too).
    terminal.expect("Kaizen wants to run Bash");
    terminal.expect("touch elsewhere");
    // Answered from another terminal while this one asks.
    common::succeeded(&cluster.approve(&["--deny", "not now"]));
    terminal.expect("answered elsewhere");
    assert_eq!(terminal.finish(), Some(0), "{}", terminal.transcript());
    assert!(ws.join("approved").exists(), "{}", terminal.transcript());
    assert!(!ws.join("elsewhere").exists());
    let sent = results_sent(&cluster.server, 3);
    assert!(sent[1].contains("Which database? → SQLite"), "{sent:?}");
    assert!(sent[2].contains("not now"), "{sent:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_cut_with_its_worker_is_reported_once_and_not_run_again() {
    let task = json!({
        "description": "Look around",
        "prompt": "List the text files, then count.",
        "subagent_type": "general-purpose",
    });
    let script = Script::new()
        .reply(Reply::tool("Task", &task.to_string()))
        // The sub-agent: two read-only calls at once, then a slow command.
        .reply(
            Reply::tool("Glob", &json!({"pattern": "*.txt"}).to_string())
                .with_tool("Grep", &json!({"pattern": "nothing"}).to_string()),
        )
        .reply(bash("echo s >> runs-s; sleep 4"))
        .reply(Reply::text("done"));
    let test = "a_sub_agent_cut_with_its_worker_is_reported_once_and_not_run_again";
    let Some(mut cluster) = Cluster::isolated(test, script).await else {
        return;
    };
    let ws = cluster.ws();
    let submitted = cluster.submit_in_background("look");
    cluster
        .wait_for_runs("the sub-agent's Bash step", "runs-s", 1)
        .await;
    cluster.kill_busy_worker();
    let out = finished(submitted).await;
    let (events, stdout) = cluster.ended(&out, 0);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["output"], "done");
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{result:#}");
    assert_eq!(calls[0]["name"], "Task");
    assert_eq!(calls[0]["status"], "error", "{result:#}");
    assert!(
        serde_json::to_string(&calls[0])
            .unwrap()
            .contains("cut off"),
        "{result:#}"
    );
    // The sub-agent's command ran once, and no model call ran again.
    assert_eq!(runs(&ws, "runs-s"), 1);
    assert_eq!(cluster.server.requests().len(), 4, "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_waiting_on_an_answer_is_let_go_of_and_runs_again_when_answered() {
    let script = Script::new()
        .reply(bash("touch approved"))
        .reply(Reply::text("done"));
    let test = "a_turn_waiting_on_an_answer_is_let_go_of_and_runs_again_when_answered";
    let suspend = ["--suspend-after", "1"];
    let Some(cluster) = Cluster::isolated_with(test, script, &suspend).await else {
        return;
    };
    cluster.ask_before(&["touch approved"]);
    let ws = cluster.ws();
    let submitter = started(cluster.submit_in("default", "touch a file"));
    cluster.wait_for_question("touch approved").await;
    // Nobody answers for a while: the engine suspends the turn, and the
    // worker lets go of it without writing anything more.
    cluster
        .wait_for_logged(
            "the worker to let go of the turn",
            &[0, 1],
            "let go of the turn",
        )
        .await;
    common::succeeded(&cluster.approve(&["--allow"]));
    let out = output_of(submitter).await;
    let (events, stdout) = cluster.ended(&out, 0);
    let result = events.last().unwrap();
    assert_eq!(result["status"], "complete", "{result:#}");
    assert!(ws.join("approved").exists());
    assert_eq!(cluster.server.requests().len(), 2, "{stdout}");
    let of_type = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(of_type("tool_call"), 1, "{stdout}");
    assert_eq!(of_type("permission_request"), 1, "{stdout}");
    assert_eq!(of_type("tool_result"), 1, "{stdout}");
    assert!(cluster.worker_log().contains("turn ended complete"));
}
