//! Compaction through the real `kaizen run` on the scripted model server,
//! with a model whose window the config makes small: a session that
//! crosses the threshold several times still finishes, each summary asked
//! of the `compaction` role with the older turns and the recent turn kept
//! verbatim; long results are elided first when that is enough; a resumed
//! session goes on from what the model saw; a fork from before a
//! compaction sees the whole conversation, one from after it the summary.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{provider_command, run_command};
use kaizen_model_server::{ModelServer, Recorded, Reply, Script, Wire};
use serde_json::{Value, json};
use std::path::Path;

const TASK: &str = "Count with seq.";
const SUMMARY: &str = "SUMMARY: ran seq 1 1500 again and again.";

/// `[context]` for a 20 000-token window (compacting past 16 000, keeping
/// up to 6 000 verbatim), eliding results over `elide_over` bytes.
fn config(elide_over: usize) -> String {
    format!(
        "[context]\nthreshold = 0.8\nkeep-recent = 0.3\nelide-over = {elide_over}\n[context.windows]\n\"gpt-4o-mini\" = 20000\n"
    )
}

/// `steps` calls of `seq 1 1500` (about 3 000 tokens of output each),
/// then an answer; the summary for tool-less requests.
fn script(steps: usize, answer: &str) -> Script {
    let seq = json!({"command": "seq 1 1500"}).to_string();
    let mut script = (0..steps).fold(Script::new(), |script, _| {
        script.reply(Reply::tool("Bash", &seq))
    });
    script = script.reply(Reply::text(answer));
    script.aside = Some(Reply::text(SUMMARY).with_usage(500, 40));
    script
}

/// One `kaizen run` in `home` and `ws` against `server`: its events
/// lines and stderr.
fn run(home: &Path, ws: &Path, server: &ModelServer, args: &[&str]) -> (Vec<Value>, String) {
    run_with_claude(home, ws, server, args, &home.join("no-claude-settings"))
}

/// [`run`] with Claude Code's user settings in `claude`.
fn run_with_claude(
    home: &Path,
    ws: &Path,
    server: &ModelServer,
    args: &[&str],
    claude: &Path,
) -> (Vec<Value>, String) {
    let mut all = vec![
        "--model",
        "gpt-4o-mini",
        "--output-format",
        "events",
        "--permission-mode",
        "bypassPermissions",
    ];
    all.extend(args);
    let out = run_command(home, ws, Some((server, Wire::OpenAi)), &all)
        .env("CLAUDE_CONFIG_DIR", claude)
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["type"] == kind).collect()
}

fn offers_tools(request: &Recorded) -> bool {
    request.body.get("tools").is_some()
}

/// The request's messages after the system prompt.
fn messages(request: &Recorded) -> Vec<Value> {
    request.body["messages"].as_array().unwrap()[1..].to_vec()
}

fn text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_past_its_window_is_summarised_and_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config(1_000_000)).unwrap();
    let server = ModelServer::start(script(10, "Counted ten times."))
        .await
        .unwrap();
    let (lines, stderr) = run(home.path(), ws.path(), &server, &[TASK]);
    let result = lines.last().unwrap();
    assert_eq!(result["status"], "complete", "{stderr}");
    assert_eq!(result["output"], "Counted ten times.");
    let compactions = of_type(&lines, "compaction");
    assert!(compactions.len() >= 2, "{compactions:?}");
    assert_eq!(result["compactions"], compactions.len());
    for event in &compactions {
        assert_eq!(event["summarized"], true, "{event}");
        assert_eq!(event["model"], "gpt-4o-mini");
        let (before, after) = (
            event["tokens_before"].as_u64().unwrap(),
            event["tokens_after"].as_u64().unwrap(),
        );
        assert!(before > 16_000 && after < 12_000, "{event}");
    }
    // Each summary was asked without tools, of the older turns.
    let requests = server.requests();
    let summaries: Vec<&Recorded> = requests.iter().filter(|r| !offers_tools(r)).collect();
    assert_eq!(summaries.len(), compactions.len());
    for request in &summaries {
        let system = text(&request.body["messages"][0]);
        assert!(system.contains("You compact the conversation"), "{system}");
        let asked = text(&messages(request)[0]);
        assert!(asked.contains(TASK) && asked.contains("→ Bash"), "{asked}");
    }
    // Every summary's tokens are in the result (the main turns report none).
    assert_eq!(
        result["tokens_used"]["input"],
        500 * compactions.len() as u64
    );
    // The call after the first summary: the summary with the task, then the
    // last turn verbatim.
    let first = requests.iter().position(|r| !offers_tools(r)).unwrap();
    let next = messages(&requests[first + 1]);
    let opening = text(&next[0]);
    assert!(opening.starts_with("[kaizen compacted"), "{opening}");
    assert!(
        opening.contains(TASK) && opening.contains(SUMMARY),
        "{opening}"
    );
    assert_eq!(next[1]["role"], "assistant");
    assert_eq!(next[1]["tool_calls"][0]["function"]["name"], "Bash");
    assert_eq!(next[2]["role"], "tool");
    assert!(
        text(&next[2]).contains("1499\n1500"),
        "the kept result is whole"
    );
    assert_eq!(next.len(), 3);

    // Forked before the first compaction, the conversation is whole; after
    // the last, it starts with the summary.
    let id = result["session_id"].as_str().unwrap().to_string();
    for (at, compacted) in [("2", false), ("10", true)] {
        let fork = ModelServer::start(script(0, "Forked.")).await.unwrap();
        let args = ["--fork", id.as_str(), "--at", at, "Go on."];
        let (lines, stderr) = run(home.path(), ws.path(), &fork, &args);
        assert_eq!(lines.last().unwrap()["status"], "complete", "{stderr}");
        let seen = messages(&fork.requests()[0]);
        let opening = text(&seen[0]);
        assert_eq!(
            opening.starts_with("[kaizen compacted"),
            compacted,
            "at {at}: {opening}"
        );
        if !compacted {
            assert!(opening.contains(TASK), "{opening}");
            let calls = seen.iter().filter(|m| m["role"] == "assistant").count();
            assert_eq!(calls, 2, "at {at}");
        }
    }

    // Resumed, the model sees what it saw last: the last summary first.
    let again = ModelServer::start(script(0, "Still counted."))
        .await
        .unwrap();
    let (lines, stderr) = run(
        home.path(),
        ws.path(),
        &again,
        &["--resume", "last", "Done?"],
    );
    assert_eq!(lines.last().unwrap()["status"], "complete", "{stderr}");
    let resumed = messages(&again.requests()[0]);
    assert!(text(&resumed[0]).starts_with("[kaizen compacted"));
    assert!(text(resumed.last().unwrap()).contains("Done?"));
}

#[tokio::test(flavor = "multi_thread")]
async fn long_results_are_elided_first_when_that_is_enough() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config(4096)).unwrap();
    let server = ModelServer::start(script(6, "Counted six times."))
        .await
        .unwrap();
    let (lines, stderr) = run(home.path(), ws.path(), &server, &[TASK]);
    let result = lines.last().unwrap();
    assert_eq!(result["status"], "complete", "{stderr}");
    let compactions = of_type(&lines, "compaction");
    assert!(!compactions.is_empty());
    assert!(
        compactions
            .iter()
            .all(|c| c["summarized"] == false && c["cost_usd"] == 0.0)
    );
    // No summary was asked; older results are cut short, the last whole.
    let requests = server.requests();
    assert!(requests.iter().all(offers_tools));
    let last = messages(requests.last().unwrap());
    let results: Vec<String> = last
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(text)
        .collect();
    assert!(
        results[0].contains("kaizen elided this result"),
        "{}",
        results[0]
    );
    assert!(results.last().unwrap().contains("1499\n1500"));
    // The session's log keeps what was elided.
    let id = result["session_id"].as_str().unwrap();
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(["sessions", "show", id])
        .env("KAIZEN_HOME", home.path())
        .output()
        .unwrap();
    let shown = common::succeeded(&shown);
    assert!(shown.contains("long tool results in"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pre_compact_hooks_instruct_the_summary_or_keep_the_conversation_whole() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config(1_000_000)).unwrap();
    let claude = tempfile::tempdir().unwrap();
    let hook = |command: &str| {
        let settings = json!({"hooks": {"PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": command}]}]}});
        std::fs::write(claude.path().join("settings.json"), settings.to_string()).unwrap();
    };
    let says = json!({"hookSpecificOutput": {"hookEventName": "PreCompact", "additionalContext": "Keep every number."}});
    hook(&format!("echo '{says}'"));
    let ws = tempfile::tempdir().unwrap();
    let server = ModelServer::start(script(5, "Counted.")).await.unwrap();
    let (lines, stderr) = run_with_claude(home.path(), ws.path(), &server, &[TASK], claude.path());
    assert_eq!(lines.last().unwrap()["status"], "complete", "{stderr}");
    let requests = server.requests();
    let summary = requests
        .iter()
        .find(|r| !offers_tools(r))
        .expect("a summary request");
    let system = text(&summary.body["messages"][0]);
    assert!(system.contains("Also: Keep every number."), "{system}");

    // A hook that blocks keeps the conversation whole, and says so.
    hook(&format!(
        "echo '{}'",
        json!({"decision": "block", "reason": "not now"})
    ));
    let ws = tempfile::tempdir().unwrap();
    let server = ModelServer::start(script(5, "Counted.")).await.unwrap();
    let (lines, stderr) = run_with_claude(home.path(), ws.path(), &server, &[TASK], claude.path());
    let result = lines.last().unwrap();
    assert_eq!(result["status"], "complete", "{stderr}");
    assert_eq!(result["compactions"], 0);
    assert!(server.requests().iter().all(offers_tools));
    let notices: Vec<String> = of_type(&lines, "notice")
        .iter()
        .map(|n| n["text"].to_string())
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("kept the conversation whole") && n.contains("not now")),
        "{notices:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_compacted_by_hand_goes_on_from_its_summary() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // The default window: three steps never fill it.
    let server = ModelServer::start(script(3, "Counted thrice."))
        .await
        .unwrap();
    let (lines, stderr) = run(home.path(), ws.path(), &server, &[TASK]);
    assert_eq!(lines.last().unwrap()["compactions"], 0, "{stderr}");

    let summariser = ModelServer::start(script(0, "unused")).await.unwrap();
    let args = ["sessions", "compact", "last", "--json"];
    let out = provider_command(
        home.path(),
        ws.path(),
        Some((&summariser, Wire::OpenAi)),
        &args,
    )
    .output()
    .unwrap();
    let event: Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
    assert_eq!(event["type"], "compaction");
    assert_eq!(event["trigger"], "manual");
    assert_eq!(event["summarized"], true);
    // The rest fits in keep-recent of the window: only the first step goes.
    assert_eq!(event["replaced"], 3, "{event}");
    assert!(
        event["tokens_after"].as_u64() < event["tokens_before"].as_u64(),
        "{event}"
    );
    assert_eq!(summariser.requests().len(), 1);

    let next = ModelServer::start(script(0, "Went on.")).await.unwrap();
    let (lines, stderr) = run(
        home.path(),
        ws.path(),
        &next,
        &["--resume", "last", "Go on."],
    );
    assert_eq!(lines.last().unwrap()["status"], "complete", "{stderr}");
    let seen = messages(&next.requests()[0]);
    let opening = text(&seen[0]);
    assert!(
        opening.starts_with("[kaizen compacted") && opening.contains(SUMMARY),
        "{opening}"
    );
    assert_eq!(seen[1]["role"], "assistant");
}
