//! Ollama chat: NDJSON streaming by default, one object with stream false.

mod common;

use common::{content_type, ndjson, post, read_body};
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};

fn url(server: &ModelServer) -> String {
    format!("{}/api/chat", server.ollama_host())
}

#[tokio::test]
async fn streams_ndjson_by_default() {
    let reply = Reply::text("Sure, reading it now.")
        .with_tool("read", r#"{"path":"a.txt"}"#)
        .with_tool("bad", r#"{"path": "#)
        .with_usage(30, 9);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let resp = post(
        &url(&server),
        &json!({"model": "llama-test", "messages": []}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(content_type(&resp), "application/x-ndjson");
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none());
    let lines = ndjson(&bytes);
    let (last, rest) = lines.split_last().unwrap();
    assert!(
        rest.iter()
            .all(|l| l["done"] == false && l["model"] == "llama-test")
    );
    assert!(
        rest.iter()
            .all(|l| l["created_at"].as_str().unwrap().ends_with('Z'))
    );
    let text: String = rest
        .iter()
        .map(|l| l["message"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Sure, reading it now.");
    assert!(rest.len() >= 4, "several text pieces and a tool line");
    let calls: Vec<&Value> = rest
        .iter()
        .filter_map(|l| l["message"].get("tool_calls"))
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0],
        &json!([
            {"function": {"index": 0, "name": "read", "arguments": {"path": "a.txt"}}},
            {"function": {"index": 1, "name": "bad", "arguments": "{\"path\": "}},
        ])
    );
    assert_eq!(last["done"], true);
    assert_eq!(last["done_reason"], "stop");
    assert_eq!(last["message"], json!({"role": "assistant", "content": ""}));
    assert_eq!(last["prompt_eval_count"], 30);
    assert_eq!(last["eval_count"], 9);

    let recorded = &server.requests()[0];
    assert_eq!(recorded.wire, Wire::Ollama);
    assert!(recorded.stream, "absent stream means streaming for Ollama");
}

#[tokio::test]
async fn stream_false_answers_one_object() {
    let server = ModelServer::start(
        Script::new()
            .reply(Reply::text("Hello").with_usage(3, 1))
            .reply(Reply::tool("ls", r#"{"dir":"."}"#)),
    )
    .await
    .unwrap();
    let request = json!({"model": "llama-test", "stream": false, "messages": []});
    let resp = post(&url(&server), &request).await;
    assert!(content_type(&resp).starts_with("application/json"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["done"], true);
    assert_eq!(
        body["message"],
        json!({"role": "assistant", "content": "Hello"})
    );
    assert_eq!(body["prompt_eval_count"], 3);
    assert_eq!(body["eval_count"], 1);

    let body: Value = post(&url(&server), &request).await.json().await.unwrap();
    assert_eq!(body["message"]["content"], "");
    assert_eq!(
        body["message"]["tool_calls"],
        json!([{"function": {"index": 0, "name": "ls", "arguments": {"dir": "."}}}])
    );
    assert!(server.requests().iter().all(|r| !r.stream));
}

#[tokio::test]
async fn explicit_stream_true_streams() {
    let server = ModelServer::start(Script::new().reply(Reply::text("x")))
        .await
        .unwrap();
    let resp = post(&url(&server), &json!({"model": "m", "stream": true})).await;
    let (bytes, _) = read_body(resp).await;
    let lines = ndjson(&bytes);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["done"], true);
}
