//! Routing, recording, exhaustion, scripts as JSON, and the binary.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{client, post};
use kaizen_model_server::{Fault, ModelServer, Recorded, Reply, Script, Turn, Wire};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn server_can_be_shared_across_tasks() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<ModelServer>();
    send_sync::<Recorded>();
}

#[tokio::test]
async fn base_urls_point_at_the_server() {
    let server = ModelServer::start(Script::new()).await.unwrap();
    let addr = server.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(server.openai_base_url(), format!("http://{addr}/v1"));
    assert_eq!(server.anthropic_base_url(), format!("http://{addr}"));
    assert_eq!(server.ollama_host(), format!("http://{addr}"));
    assert_eq!(server.responses_base_url(), format!("http://{addr}/v1"));
    assert_eq!(server.gemini_base_url(), format!("http://{addr}"));
}

#[tokio::test]
async fn queries_do_not_change_the_route() {
    let server = ModelServer::start(Script::new().reply(Reply::text("beta")))
        .await
        .unwrap();
    // Claude Code adds `?beta=true`.
    let body: Value = post(
        &format!("{}/v1/messages?beta=true", server.anthropic_base_url()),
        &json!({"model": "claude-test"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["content"][0]["text"], "beta");
    let recorded = &server.requests()[0];
    assert_eq!(recorded.wire, Wire::Anthropic);
    assert_eq!(recorded.path, "/v1/messages");
}

#[tokio::test]
async fn turns_are_consumed_in_order_across_wires_and_recorded() {
    let server = ModelServer::start(
        Script::new()
            .reply(Reply::text("one"))
            .reply(Reply::text("two"))
            .reply(Reply::text("three")),
    )
    .await
    .unwrap();
    assert_eq!(server.remaining(), 3);
    let body: Value = post(
        &format!("{}/api/chat", server.ollama_host()),
        &json!({"model": "a", "stream": false}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["message"]["content"], "one");
    assert_eq!(server.remaining(), 2);
    let body: Value = client()
        .post(format!("{}/v1/messages", server.anthropic_base_url()))
        .header("X-Api-Key", "k")
        .json(&json!({"model": "b"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["content"][0]["text"], "two");
    let body: Value = post(
        &format!("{}/chat/completions?trace=1", server.openai_base_url()),
        &json!({"model": "c"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "three");
    assert_eq!(server.remaining(), 0);

    let recorded = server.requests();
    let summary: Vec<(Wire, &str, &str, bool)> = recorded
        .iter()
        .map(|r| {
            (
                r.wire,
                r.path.as_str(),
                r.body["model"].as_str().unwrap(),
                r.stream,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Wire::Ollama, "/api/chat", "a", false),
            (Wire::Anthropic, "/v1/messages", "b", false),
            (Wire::OpenAi, "/v1/chat/completions", "c", false),
        ]
    );
    assert_eq!(
        recorded[1].headers["x-api-key"], "k",
        "names are lower-cased"
    );
}

#[tokio::test]
async fn exhausted_script_answers_500() {
    let server = ModelServer::start(Script::new().reply(Reply::text("only")))
        .await
        .unwrap();
    let url = format!("{}/chat/completions", server.openai_base_url());
    assert_eq!(post(&url, &json!({"model": "m"})).await.status(), 200);
    let resp = post(&url, &json!({"model": "m", "stream": true})).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("script exhausted")
    );
    let resp = post(&format!("{}/api/chat", server.ollama_host()), &json!({})).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("script exhausted"));
    assert_eq!(server.remaining(), 0);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unknown_paths_wrong_methods_and_bad_json_consume_nothing() {
    let server = ModelServer::start(Script::new().reply(Reply::text("kept")))
        .await
        .unwrap();
    let resp = post(
        &format!("{}/v1/embeddings", server.anthropic_base_url()),
        &json!({}),
    )
    .await;
    assert_eq!(resp.status(), 404);
    let resp = client()
        .get(format!("{}/chat/completions", server.openai_base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    let resp = client()
        .post(format!("{}/v1/messages", server.anthropic_base_url()))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(resp.json::<Value>().await.unwrap()["type"], "error");
    assert_eq!(server.remaining(), 1);
    let recorded = server.requests();
    assert_eq!(recorded.len(), 1, "only the bad-JSON request is recorded");
    assert_eq!(recorded[0].body, json!("{not json"));
}

#[test]
fn scripts_read_from_json() {
    let script: Script = serde_json::from_value(json!({"turns": [
        {"reply": {"tool_calls": [{"name": "read", "arguments": "{\"path\":\"a\"}"}]}},
        {"fault": {"status": {"code": 429, "retry_after": 1}}},
        {"fault": {"truncated": {"reply": {"text": "cut"}}}},
        {"fault": {"slow": {"delay_ms": 5, "reply": {"text": "late", "model": "x"}}}},
        {"fault": "hang"},
        {"reply": {"text": "done", "input_tokens": 10, "output_tokens": 2}},
    ]}))
    .unwrap();
    assert_eq!(script.turns.len(), 6);
    assert!(matches!(&script.turns[0], Turn::Reply(r) if r.tool_calls[0].id.is_none()));
    assert!(matches!(
        script.turns[1],
        Turn::Fault(Fault::Status {
            code: 429,
            retry_after: Some(1),
            message: None
        })
    ));
    assert!(matches!(script.turns[4], Turn::Fault(Fault::Hang)));
    assert!(matches!(&script.turns[5], Turn::Reply(r) if r.output_tokens == 2));
    // And back.
    let again: Script = serde_json::from_str(&serde_json::to_string(&script).unwrap()).unwrap();
    assert_eq!(again.turns.len(), 6);
}

/// Kills the child on drop, so a failing test leaves no process behind.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn binary_serves_a_script_file_and_logs_requests() {
    let dir = std::env::temp_dir().join(format!("kaizen-model-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    let log = dir.join("requests.jsonl");
    let _ = std::fs::remove_file(&log);
    std::fs::write(
        &script,
        r#"{"turns": [{"reply": {"text": "from a file"}}]}"#,
    )
    .unwrap();

    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_kaizen-model-server"))
            .arg("--script")
            .arg(&script)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    let body: Value = post(
        &format!("{base}/api/chat"),
        &json!({"model": "m", "stream": false}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["message"]["content"], "from a file");

    let logged = std::fs::read_to_string(&log).unwrap();
    let records: Vec<Recorded> = logged
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].wire, Wire::Ollama);
    assert_eq!(records[0].body["model"], "m");
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn binary_rejects_missing_script() {
    let out = Command::new(env!("CARGO_BIN_EXE_kaizen-model-server"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--script"));
}
