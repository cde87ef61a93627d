//! A session survives the loss of its worker mid-step: the real Restate
//! server (from npm, under the target directory) runs a session object
//! whose handler runs Kaizen's loop with `RestateSteps`; the worker is
//! killed with SIGKILL while a tool step runs, another worker process takes
//! over, and the session completes with no step run twice: the cut tool
//! step is reported to the model as cut, and the cost is each model call's
//! once. Before it, two read-only steps run side by side, the first the
//! slower, and the run again reads their entries back in the order they
//! were journaled.
//!
//! This file is its own test harness: run plainly, it is the test, which
//! re-runs itself in a network namespace with only loopback (the server
//! looks for updates at start); with `KAIZEN_CLUSTER_WORKER=PORT` it is a
//! worker.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use kaizen_cluster::{RestateSteps, serve_steps};
use kaizen_llm::{
    Block, CompletionFuture, EventSink, Provider, Request, Response, StopReason, Usage,
};
use kaizen_loop::{Agent, AgentConfig, Guard, SessionState};
use kaizen_protocol::{CancellationToken, Silent};
use kaizen_test_support::KillOnDrop;
use kaizen_test_support::netns::{self, Isolation};
use kaizen_test_support::restate::{self, http};
use kaizen_tools::{CallContext, Danger, Tool, ToolFuture, ToolOutput, ToolRegistry, ToolSpec};
use restate_sdk::prelude::*;
use serde_json::json;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const WORKER: &str = "KAIZEN_CLUSTER_WORKER";
const DIR: &str = "KAIZEN_CLUSTER_DIR";

fn main() {
    if let Ok(port) = std::env::var(WORKER) {
        return worker(&port);
    }
    let server = restate::install(env!("CARGO_TARGET_TMPDIR"));
    match netns::program_isolated(env!("CARGO_TARGET_TMPDIR")) {
        Isolation::Inside => a_session_survives_its_worker(&server),
        Isolation::Ran(status) if status.success() => {
            println!("test a_session_survives_its_worker ... ok");
        }
        Isolation::Ran(status) => panic!("the test failed in its network namespace ({status})"),
        Isolation::OptedOut => {}
    }
}

// ---- the worker ----

/// Answers by the conversation's length, so any worker gives the same
/// answer to the same request; counts its calls in a file.
struct ByPosition(PathBuf);

impl Provider for ByPosition {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(&'a self, request: &'a Request, _: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            bump(&self.0.join("model-calls"));
            let turn = request.messages.len() / 2;
            let call = |what: &str| Block::ToolUse {
                id: format!("call_{what}"),
                name: "Bump".into(),
                arguments: json!({"what": what}).to_string(),
            };
            let look = |what: &str| Block::ToolUse {
                id: format!("call_{what}"),
                name: "Look".into(),
                arguments: json!({"what": what}).to_string(),
            };
            let (content, stop_reason) = match turn {
                // Two read-only steps at once, the first the slower: the
                // journal must hold them the same way on every run.
                0 => (vec![look("x"), look("y")], StopReason::ToolUse),
                1 => (vec![call("a")], StopReason::ToolUse),
                2 => (vec![call("b")], StopReason::ToolUse),
                _ => (
                    vec![Block::Text {
                        text: "done".into(),
                    }],
                    StopReason::EndTurn,
                ),
            };
            Ok(Response {
                content,
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 10,
                    ..Usage::default()
                },
                stop_reason,
                model: "scripted-model".into(),
            })
        })
    }
}

/// Counts a run in `file`; the count after it.
fn bump(file: &Path) -> u32 {
    let n = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .unwrap_or(0)
        + 1;
    std::fs::write(file, n.to_string()).unwrap();
    n
}

/// A tool with an effect: it counts its runs of each `what`; `b` takes a
/// while, long enough for the test to kill its worker. As `Look`, it is
/// read-only (its count is the test's, not the model's), and `x` takes a
/// little while.
struct Bump(ToolSpec, PathBuf);

impl Tool for Bump {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, _: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let what = input["what"].as_str().unwrap_or_default().to_string();
            let n = bump(&self.1.join(format!("tool-{what}")));
            let pause = match what.as_str() {
                "b" => Duration::from_secs(3),
                "x" => Duration::from_millis(300),
                _ => Duration::ZERO,
            };
            tokio::time::sleep(pause).await;
            Ok(ToolOutput::text(format!("bumped {what} (run {n})")))
        })
    }
}

struct Session;

#[restate_sdk::object]
impl Session {
    #[handler]
    async fn turn(&self, ctx: ObjectContext<'_>, task: String) -> Result<String, HandlerError> {
        let dir = PathBuf::from(std::env::var(DIR).unwrap());
        let provider = ByPosition(dir.clone());
        let mut tools = ToolRegistry::new();
        let spec = ToolSpec {
            name: "Bump".into(),
            description: "bumps".into(),
            input_schema: json!({"type": "object"}),
            danger: Danger::Safe,
            read_only: false,
        };
        let look = ToolSpec {
            name: "Look".into(),
            read_only: true,
            ..spec.clone()
        };
        tools.register(Arc::new(Bump(spec, dir.clone()))).unwrap();
        tools.register(Arc::new(Bump(look, dir))).unwrap();
        let (steps, requests) = RestateSteps::channel();
        let mut config = AgentConfig::new("scripted-model", std::env::temp_dir());
        config.steps = Arc::new(steps);
        let pricing = |_: &str, _: &Usage| 0.25;
        let agent = Agent {
            provider: &provider,
            tools: &tools,
            pricing: &pricing,
            config,
            observer: &Silent,
            journal: None,
            guard: Arc::new(Guard::allow_all()),
        };
        let session = ctx.key().to_string();
        let run = async move {
            let mut state = SessionState::new(session, "scripted-model");
            agent
                .resume(&mut state, Some(&task), &CancellationToken::new())
                .await
        };
        // The loop ends, dropping its executor, and the steps' serving
        // ends with it.
        let interrupt = kaizen_protocol::CancellationToken::new();
        let (result, ()) = tokio::join!(run, serve_steps(&ctx, requests, &interrupt));
        Ok(json!({
            "status": result.status.as_str(),
            "output": result.output,
            "cycles": result.cycles_used,
            "calls": result.tool_calls.iter().map(|c| c.status.as_str()).collect::<Vec<_>>(),
            "cost_usd": result.cost_usd,
        })
        .to_string())
    }
}

fn worker(port: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(
        HttpServer::new(Endpoint::builder().bind(Session).build())
            .listen_and_serve(format!("127.0.0.1:{port}").parse().unwrap()),
    );
}

// ---- the test ----

/// Waits until `ready` holds, or panics saying `what`.
fn wait_for(what: &str, ready: impl FnMut() -> bool) {
    restate::wait_for(what, ready).unwrap();
}

fn spawn_worker(port: u16, dir: &Path) -> KillOnDrop {
    KillOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .env(WORKER, port.to_string())
            .env(DIR, dir)
            .spawn()
            .unwrap(),
    )
}

fn count(dir: &Path, name: &str) -> u32 {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0)
}

fn a_session_survives_its_worker(server: &Path) {
    let up = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status();
    assert!(up.is_ok_and(|s| s.success()), "cannot bring loopback up");
    let dir = tempfile::tempdir().unwrap();
    let _server = restate::start(server, dir.path());
    let port = 9181;
    let first = spawn_worker(port, dir.path());
    wait_for("the first worker", || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let (status, body) = http(
        9070,
        "POST",
        "/deployments",
        &json!({"uri": format!("http://127.0.0.1:{port}")}).to_string(),
    );
    assert!(
        (200..300).contains(&status),
        "registering the worker: {status} {body}"
    );
    let (status, body) = http(8080, "POST", "/Session/s1/turn/send", "\"bump a, then b\"");
    assert!((200..300).contains(&status), "submitting: {status} {body}");
    let id = serde_json::from_str::<serde_json::Value>(&body).unwrap()["invocationId"]
        .as_str()
        .unwrap()
        .to_string();

    // The worker is lost while the second tool step runs.
    wait_for("the second tool step", || count(dir.path(), "tool-b") == 1);
    drop(first);
    assert_eq!(count(dir.path(), "tool-a"), 1);
    assert_eq!(count(dir.path(), "model-calls"), 3);

    let _second = spawn_worker(port, dir.path());
    let (status, output) = http(8080, "GET", &format!("/restate/invocation/{id}/attach"), "");
    assert_eq!(status, 200, "{output}");
    let result: serde_json::Value =
        serde_json::from_str(&serde_json::from_str::<String>(&output).unwrap()).unwrap();
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["output"], "done");
    assert_eq!(result["cycles"], 4);
    // The cut step is reported to the model as cut, not run again.
    assert_eq!(
        result["calls"],
        json!(["success", "success", "success", "error"]),
        "{result}"
    );
    // Budgets hold across the loss: each model call charged once.
    assert_eq!(result["cost_usd"], 1.0, "{result}");
    // Four model calls and four tool steps, each run once.
    assert_eq!(
        count(dir.path(), "model-calls"),
        4,
        "a finished model call ran again"
    );
    for what in ["x", "y"] {
        assert_eq!(
            count(dir.path(), &format!("tool-{what}")),
            1,
            "{what} ran again"
        );
    }
    assert_eq!(
        count(dir.path(), "tool-a"),
        1,
        "a finished tool step ran again"
    );
    assert_eq!(
        count(dir.path(), "tool-b"),
        1,
        "the cut tool step ran again"
    );
}
