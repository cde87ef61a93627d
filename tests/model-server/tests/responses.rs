//! OpenAI Responses, streaming and not.

mod common;

use common::{client, content_type, read_body, sse};
use kaizen_model_server::{Fault, ModelServer, Options, Reply, Script, Wire};
use serde_json::{Value, json};

async fn send(server: &ModelServer, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/responses", server.responses_base_url()))
        .bearer_auth("sk-test")
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A request offering one function tool, as Codex sends.
fn with_tools(stream: bool) -> Value {
    json!({
        "model": "gpt-test",
        "instructions": "Be brief.",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}}],
        "stream": stream,
    })
}

#[tokio::test]
async fn non_streaming_message_and_function_calls() {
    let reply = Reply::text("Reading.")
        .with_tool("read", r#"{"path":"a.txt"}"#)
        .with_tool_id("call_x", "grep", r#"{"pattern": "#)
        .with_usage(42, 7);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let resp = send(&server, &with_tools(false)).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("application/json"));
    assert_eq!(resp.headers()["x-request-id"], "req_scripted");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["id"], "resp_scripted0001");
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "completed");
    assert_eq!(body["model"], "gpt-test");
    assert!(body["created_at"].as_u64().unwrap() > 1_700_000_000);
    let output = body["output"].as_array().unwrap();
    assert_eq!(output.len(), 3);
    assert_eq!(output[0]["type"], "message");
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(
        output[0]["content"],
        json!([{"type": "output_text", "text": "Reading.", "annotations": []}])
    );
    assert_eq!(output[1]["type"], "function_call");
    assert!(output[1]["id"].as_str().unwrap().starts_with("fc_"));
    assert_eq!(output[1]["call_id"], "call_1");
    assert_eq!(output[1]["name"], "read");
    assert_eq!(output[1]["arguments"], r#"{"path":"a.txt"}"#);
    assert_eq!(output[1]["status"], "completed");
    assert_eq!(output[2]["call_id"], "call_x");
    assert_eq!(output[2]["arguments"], r#"{"pattern": "#, "malformed as-is");
    assert_ne!(output[1]["id"], output[2]["id"]);
    assert_eq!(
        body["usage"],
        json!({
            "input_tokens": 42,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 49,
        })
    );
    let recorded = &server.requests()[0];
    assert_eq!(recorded.wire, Wire::Responses);
    assert_eq!(recorded.path, "/v1/responses");
    assert!(!recorded.stream);
    assert_eq!(recorded.headers["authorization"], "Bearer sk-test");
}

#[tokio::test]
async fn streaming_events_in_order_reassemble_text_and_calls() {
    let reply = Reply::text("Let me check that file for you.")
        .with_tool("read", r#"{"path":"src/lib.rs"}"#)
        .with_tool("shell", r#"{"command":["bash","-lc","ls"]}"#)
        .with_usage(321, 45);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let resp = send(&server, &with_tools(true)).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("text/event-stream"));
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none(), "{err:?}");
    let events = sse(&bytes);
    for (n, e) in events.iter().enumerate() {
        let v = e.json();
        assert_eq!(
            e.event.as_deref(),
            v["type"].as_str(),
            "event: matches type"
        );
        assert_eq!(v["sequence_number"], n, "sequence numbers count up");
    }
    let names: Vec<&str> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(
        names[..4],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
        ]
    );
    assert_eq!(names.last(), Some(&"response.completed"));
    let created = events[0].json();
    assert_eq!(created["response"]["status"], "in_progress");
    assert_eq!(created["response"]["output"], json!([]));
    assert_eq!(created["response"]["model"], "gpt-test");

    // Reassemble as a client would.
    let mut text = String::new();
    let mut text_deltas = 0;
    let mut items: Vec<Value> = Vec::new();
    let mut arguments: Vec<String> = Vec::new();
    for e in &events {
        let v = e.json();
        match v["type"].as_str().unwrap() {
            "response.output_item.added" => {
                assert_eq!(v["output_index"], items.len());
                items.push(v["item"].clone());
                arguments.push(String::new());
            }
            "response.output_text.delta" => {
                assert_eq!(v["item_id"], items[0]["id"]);
                assert_eq!(
                    (v["output_index"].as_u64(), v["content_index"].as_u64()),
                    (Some(0), Some(0))
                );
                text.push_str(v["delta"].as_str().unwrap());
                text_deltas += 1;
            }
            "response.output_text.done" => assert_eq!(v["text"], text),
            "response.function_call_arguments.delta" => {
                let index = v["output_index"].as_u64().unwrap() as usize;
                assert_eq!(v["item_id"], items[index]["id"]);
                arguments[index].push_str(v["delta"].as_str().unwrap());
            }
            "response.function_call_arguments.done" => {
                let index = v["output_index"].as_u64().unwrap() as usize;
                assert_eq!(v["arguments"], arguments[index]);
            }
            "response.output_item.done" => {
                let index = v["output_index"].as_u64().unwrap() as usize;
                assert_eq!(v["item"]["id"], items[index]["id"]);
                assert_eq!(v["item"]["status"], "completed");
            }
            _ => {}
        }
    }
    assert_eq!(text, "Let me check that file for you.");
    assert!(text_deltas >= 3);
    assert_eq!(items.len(), 3);
    assert_eq!(items[1]["type"], "function_call");
    assert_eq!(items[1]["arguments"], "", "added with no arguments yet");
    assert_eq!(items[1]["call_id"], "call_1");
    assert_eq!(arguments[1], r#"{"path":"src/lib.rs"}"#);
    assert_eq!(items[2]["name"], "shell");
    assert_eq!(arguments[2], r#"{"command":["bash","-lc","ls"]}"#);

    let done = events.last().unwrap().json()["response"].clone();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["output"].as_array().unwrap().len(), 3);
    assert_eq!(done["output"][2]["arguments"], arguments[2]);
    assert_eq!(done["usage"]["input_tokens"], 321);
    assert_eq!(done["usage"]["output_tokens"], 45);
    assert_eq!(done["usage"]["total_tokens"], 366);
    assert!(server.requests()[0].stream);
}

#[tokio::test]
async fn streaming_text_only_and_empty_replies() {
    let script = Script::new()
        .reply(Reply::text("All done.").with_model("gpt-other"))
        .reply(Reply::default());
    let server = ModelServer::start(script).await.unwrap();
    let (bytes, _) = read_body(send(&server, &with_tools(true)).await).await;
    let events = sse(&bytes);
    assert!(!events.iter().any(|e| e.data.contains("function_call")));
    let done = events.last().unwrap().json();
    assert_eq!(done["response"]["model"], "gpt-other");
    assert_eq!(
        done["response"]["output"][0]["content"][0]["text"],
        "All done."
    );

    let (bytes, _) = read_body(send(&server, &with_tools(true)).await).await;
    let names: Vec<String> = sse(&bytes).into_iter().map(|e| e.event.unwrap()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.completed"
        ]
    );
}

#[tokio::test]
async fn status_faults_use_openai_error_bodies() {
    let script = Script::new()
        .fault(Fault::Status {
            code: 429,
            retry_after: Some(2),
            message: Some("slow down".into()),
        })
        .fault(Fault::status(500));
    let server = ModelServer::start(script).await.unwrap();
    let resp = send(&server, &with_tools(true)).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    assert_eq!(resp.headers()["x-request-id"], "req_scripted");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "slow down");
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    assert!(body["error"]["type"].is_string());
    let resp = send(&server, &with_tools(false)).await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "server_error");
    let resp = send(&server, &with_tools(true)).await;
    assert_eq!(resp.status(), 500, "exhausted");
}

#[tokio::test]
async fn requests_without_tools_get_the_aside() {
    let mut script = Script::new().reply(Reply::text("the turn"));
    script.aside = Some(Reply::text("a title"));
    let server = ModelServer::start(script).await.unwrap();
    for tools in [json!(null), json!([])] {
        let body: Value = send(
            &server,
            &json!({"model": "m", "input": "name this", "tools": tools}),
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(body["output"][0]["content"][0]["text"], "a title");
    }
    assert_eq!(server.remaining(), 1);
    // A tool of any type offers tools.
    let body: Value = send(
        &server,
        &json!({"model": "m", "input": "go", "tools": [{"type": "web_search"}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["output"][0]["content"][0]["text"], "the turn");
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn by_position_counts_runs_of_model_items() {
    let script = Script::new()
        .reply(Reply::text("first"))
        .reply(Reply::text("second"))
        .reply(Reply::text("third"));
    let options = Options {
        by_position: true,
        ..Default::default()
    };
    let server = ModelServer::start_with(script, options).await.unwrap();
    let user = |t: &str| json!({"type": "message", "role": "user", "content": t});
    let opening = json!({"model": "m", "input": [user("hi")]});
    // One reply (reasoning, a message and two calls) is one turn.
    let later = json!({"model": "m", "input": [
        user("hi"),
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
        {"type": "function_call_output", "call_id": "c2", "output": "y"},
        {"type": "function_call", "call_id": "c3", "name": "a", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c3", "output": "z"},
    ]});
    for (request, expected) in [(&opening, "first"), (&later, "third"), (&opening, "first")] {
        let body: Value = send(&server, request).await.json().await.unwrap();
        assert_eq!(body["output"][0]["content"][0]["text"], expected, "{body}");
    }
    // A plain-string input holds no turns.
    let body: Value = send(&server, &json!({"model": "m", "input": "hi"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["output"][0]["content"][0]["text"], "first");
}
