//! The built-in `Task` tool through `kaizen run`: the sub-agent gets its
//! own conversation and the tools its type allows (real built-in
//! components), its model calls count in the session's totals, and only
//! its final message reaches the parent.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{result_of, results_sent, run_command};
use common::workspace::Workspace;
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};

fn task(prompt: &str, kind: &str) -> Reply {
    let input = json!({"description": "Find the answer", "prompt": prompt, "subagent_type": kind});
    Reply::tool("Task", &input.to_string()).with_usage(100, 10)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn run(ws: &Workspace, script: Script, format: &str) -> (ModelServer, std::process::Output) {
    let server = ModelServer::start(script).await.unwrap();
    let mut cmd = run_command(
        ws.home.path(),
        ws.dir.path(),
        Some((&server, Wire::OpenAi)),
        &["--model", "gpt-4o-mini", "--output-format", format],
    );
    cmd.arg("Where is the answer?");
    let output = tokio::process::Command::from(cmd).output().await.unwrap();
    (server, output)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_explore_sub_agent_reads_with_its_own_tools_and_reports_back() {
    let ws = Workspace::new();
    let notes = ws.write("notes/answer.txt", "the answer is 42\n");
    let script = Script::new()
        .reply(task(
            "Find the file that holds the answer and read it.",
            "Explore",
        ))
        .reply(
            Reply::tool("Grep", &json!({"pattern": "answer is"}).to_string()).with_usage(200, 20),
        )
        .reply(Reply::tool("Read", &json!({"file_path": notes}).to_string()).with_usage(300, 30))
        .reply(Reply::text("notes/answer.txt says the answer is 42.").with_usage(400, 40))
        .reply(Reply::text("The answer is 42.").with_usage(500, 50));
    let (server, output) = run(&ws, script, "json").await;
    let result = result_of(&output);
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["output"], "The answer is 42.");
    // The parent's two model calls; all five count in the tokens.
    assert_eq!(result["cycles_used"], 2);
    assert_eq!(result["tokens_used"]["input"], 1500);
    assert_eq!(result["tokens_used"]["output"], 150);
    let calls: Vec<&str> = result["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["Task"], "the parent's own calls");

    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let parent_tools = tool_names(&requests[0].body);
    assert!(parent_tools.iter().any(|t| t == "Task"), "{parent_tools:?}");
    let sub = &requests[1].body;
    let sub_tools = tool_names(sub);
    for read_only in ["Read", "Grep", "Glob"] {
        assert!(sub_tools.iter().any(|t| t == read_only), "{sub_tools:?}");
    }
    for changing in ["Task", "Write", "Edit", "Bash", "TodoWrite"] {
        assert!(!sub_tools.iter().any(|t| t == changing), "{sub_tools:?}");
    }
    assert!(system_text(sub).contains("read-only exploration sub-agent"));
    let sub_messages = sub["messages"].as_array().unwrap();
    assert_eq!(
        sub_messages.len(),
        2,
        "system and the task only: {sub_messages:?}"
    );
    assert_eq!(
        sub_messages[1]["content"],
        "Find the file that holds the answer and read it."
    );
    // The sub-agent's own tools ran for real.
    let read = results_sent(&server, 3);
    assert!(read[1].contains("the answer is 42"), "{read:?}");
    // The parent sees the sub-agent's final message only.
    let parent = results_sent(&server, 4);
    assert_eq!(parent, ["notes/answer.txt says the answer is 42."]);
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_json_tags_the_sub_agents_events_with_the_task_call() {
    let ws = Workspace::new();
    let script = Script::new()
        .reply(task("Say hi.", "general-purpose"))
        .reply(Reply::text("hi"))
        .reply(Reply::text("It said hi."));
    let (_server, output) = run(&ws, script, "events").await;
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let nested: Vec<&Value> = events.iter().filter(|e| e["type"] == "sub_agent").collect();
    assert!(!nested.is_empty(), "{events:?}");
    assert!(
        nested.iter().all(|e| e["call_id"] == "call_1"),
        "{nested:?}"
    );
    let inner: Vec<&str> = nested
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(inner, ["session_start", "assistant", "result"]);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["output"], "It said hi.");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_type_is_refused_with_the_known_ones() {
    let ws = Workspace::new();
    let script = Script::new()
        .reply(task("Anything.", "wizard"))
        .reply(Reply::text("ok"));
    let (server, output) = run(&ws, script, "json").await;
    assert_eq!(result_of(&output)["status"], "complete");
    let sent = results_sent(&server, 1);
    assert!(
        sent[0].contains("No sub-agent was started: there is no sub-agent type `wizard`; use one of: general-purpose, Explore."),
        "{sent:?}"
    );
    assert_eq!(server.requests().len(), 2, "no sub-agent model call");
}
