//! Model roles and fallbacks through the real `kaizen run` on the scripted
//! model server: a main model that keeps failing with 503 falls back to
//! another vendor's model, reported in `events` and the result; and
//! `Task`'s sub-agents run on the `sub-agent` role's model.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::stream_run;
use kaizen_model_server::{Fault, ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};

/// `kaizen run` with `config` as the user's config against `server`'s
/// script: the output lines.
async fn run(script: Script, config: &str) -> (Vec<Value>, ModelServer) {
    let ran = stream_run(config, script, &["Answer."]).await;
    (ran.lines, ran.server)
}

fn overloaded() -> Fault {
    Fault::Status {
        code: 503,
        // Retried at once: the test is about what follows the retries.
        retry_after: Some(0),
        message: Some("overloaded".into()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_main_model_falls_back_to_the_next_of_its_chain() {
    let script = (0..4)
        .fold(Script::new(), |script, _| script.fault(overloaded()))
        .reply(Reply::text("Answered by the fallback.").with_model("claude-haiku-4-5"));
    let (lines, server) = run(script, "[fallbacks]\nmain = [\"claude-haiku-4-5\"]\n").await;

    // Four attempts on the main model (its retries), then the fallback on
    // Anthropic's wire.
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert!(requests[..4].iter().all(|r| r.wire == Wire::OpenAi));
    assert_eq!(requests[4].wire, Wire::Anthropic);
    assert_eq!(requests[4].body["model"], "claude-haiku-4-5");

    let fallback = lines
        .iter()
        .find(|line| line["type"] == "fallback")
        .expect("a fallback event");
    assert_eq!(fallback["from"], "gpt-4o-mini");
    assert_eq!(fallback["to"], "claude-haiku-4-5");
    assert!(
        fallback["error"].as_str().unwrap().contains("503"),
        "{fallback}"
    );
    let assistant = lines
        .iter()
        .find(|line| line["type"] == "assistant")
        .unwrap();
    assert_eq!(assistant["model"], "claude-haiku-4-5");
    let result = lines.last().unwrap();
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["output"], "Answered by the fallback.");
    assert_eq!(result["model_used"], "claude-haiku-4-5");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_run_that_fell_back_replays_offline() {
    let script = (0..4)
        .fold(Script::new(), |script, _| script.fault(overloaded()))
        .reply(
            Reply::tool("Glob", &json!({"pattern": "*"}).to_string())
                .with_model("claude-haiku-4-5"),
        )
        .reply(Reply::text("Nothing there.").with_model("claude-haiku-4-5"));
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("run.jsonl");
    let recording = recording.to_str().unwrap();
    let config = "[fallbacks]\nmain = [\"claude-haiku-4-5\"]\n";
    let ran = stream_run(config, script, &["--record", recording, "Look."]).await;
    assert_eq!(
        ran.lines.last().unwrap()["output"],
        "Nothing there.",
        "{}",
        ran.stderr()
    );
    // Both of the fallback's answers were recorded.
    let recorded = std::fs::read_to_string(recording).unwrap();
    assert_eq!(recorded.lines().count(), 2, "{recorded}");

    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let args = ["--replay", recording, "--output-format", "events", "Look."];
    let out = common::run::run_command(home.path(), ws.path(), None, &args)
        .output()
        .unwrap();
    let replayed: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let result = replayed.last().unwrap();
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["output"], "Nothing there.");
    assert_eq!(result["model_used"], "claude-haiku-4-5");
    assert_eq!(result["cycles_used"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_chain_the_failure_stands() {
    let script = (0..4).fold(Script::new(), |script, _| script.fault(overloaded()));
    let (lines, server) = run(script, "").await;
    assert_eq!(server.requests().len(), 4);
    assert!(lines.iter().all(|line| line["type"] != "fallback"));
    let result = lines.last().unwrap();
    assert_eq!(result["status"], "error", "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sub_agents_run_on_the_sub_agent_roles_model() {
    let task = json!({"description": "Look", "prompt": "Say hi.", "subagent_type": "Explore"});
    let script = Script::new()
        .reply(Reply::tool("Task", &task.to_string()))
        .reply(Reply::text("hi"))
        .reply(Reply::text("The sub-agent said hi."));
    let (lines, server) = run(script, "[models]\nsub-agent = \"gpt-4o-mini-sub\"\n").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["model"], "gpt-4o-mini");
    assert_eq!(requests[1].body["model"], "gpt-4o-mini-sub");
    assert_eq!(requests[2].body["model"], "gpt-4o-mini");
    assert_eq!(lines.last().unwrap()["status"], "complete");
}
