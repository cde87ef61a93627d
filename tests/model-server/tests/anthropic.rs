//! Anthropic Messages, streaming and not.

mod common;

use common::{client, content_type, read_body, sse};
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};

async fn send(server: &ModelServer, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/v1/messages", server.anthropic_base_url()))
        .header("x-api-key", "sk-ant-test")
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn non_streaming_text_and_tool_use_with_headers_recorded() {
    let reply = Reply::text("Reading.")
        .with_tool("read", r#"{"path":"a.txt"}"#)
        .with_usage(42, 7);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let request = json!({"model": "claude-test", "max_tokens": 1024, "messages": []});
    let resp = send(&server, &request).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("application/json"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert!(body["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(body["model"], "claude-test");
    assert_eq!(
        body["content"],
        json!([
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}},
        ])
    );
    assert_eq!(body["stop_reason"], "tool_use");
    assert_eq!(body["stop_sequence"], Value::Null);
    assert_eq!(body["usage"]["input_tokens"], 42);
    assert_eq!(body["usage"]["output_tokens"], 7);

    let recorded = &server.requests()[0];
    assert_eq!(recorded.wire, Wire::Anthropic);
    assert_eq!(recorded.path, "/v1/messages");
    assert!(!recorded.stream);
    assert_eq!(recorded.headers["x-api-key"], "sk-ant-test");
    assert_eq!(recorded.headers["anthropic-version"], "2023-06-01");
    assert_eq!(recorded.headers["content-type"], "application/json");
    assert_eq!(recorded.body, request);
}

#[tokio::test]
async fn non_streaming_text_only_ends_turn() {
    let server = ModelServer::start(Script::new().reply(Reply::text("Hi")))
        .await
        .unwrap();
    let body: Value = send(&server, &json!({"model": "m"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["content"], json!([{"type": "text", "text": "Hi"}]));
    assert_eq!(body["stop_reason"], "end_turn");
}

#[tokio::test]
async fn non_streaming_malformed_arguments_become_a_string_input() {
    let server = ModelServer::start(Script::new().reply(Reply::tool("read", r#"{"path": "#)))
        .await
        .unwrap();
    let body: Value = send(&server, &json!({"model": "m"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["content"][0]["input"], json!(r#"{"path": "#));
}

#[tokio::test]
async fn streaming_events_in_order_with_json_deltas() {
    let reply = Reply::text("Let me check that file.")
        .with_tool("read", r#"{"path":"src/lib.rs"}"#)
        .with_tool("grep", r#"{"pattern": "fn ma"#)
        .with_usage(321, 45);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let resp = send(&server, &json!({"model": "claude-test", "stream": true})).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("text/event-stream"));
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none(), "{err:?}");
    let events = sse(&bytes);
    for e in &events {
        assert_eq!(
            e.event.as_deref(),
            e.json()["type"].as_str(),
            "event: matches type"
        );
    }
    let names: Vec<&str> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(names[0], "message_start");
    assert_eq!(names[1], "content_block_start");
    assert_eq!(names[2], "ping");
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);

    let start = events[0].json();
    assert_eq!(start["message"]["model"], "claude-test");
    assert_eq!(start["message"]["content"], json!([]));
    assert_eq!(start["message"]["usage"]["input_tokens"], 321);

    // Reassemble the blocks.
    let mut blocks: Vec<(Value, String, usize)> = Vec::new();
    let mut open = None;
    for e in &events {
        let v = e.json();
        match v["type"].as_str().unwrap() {
            "content_block_start" => {
                assert_eq!(open, None);
                let index = v["index"].as_u64().unwrap() as usize;
                assert_eq!(index, blocks.len());
                blocks.push((v["content_block"].clone(), String::new(), 0));
                open = Some(index);
            }
            "content_block_delta" => {
                let index = v["index"].as_u64().unwrap() as usize;
                assert_eq!(open, Some(index));
                let delta = &v["delta"];
                let piece = match delta["type"].as_str().unwrap() {
                    "text_delta" => delta["text"].as_str().unwrap(),
                    "input_json_delta" => delta["partial_json"].as_str().unwrap(),
                    other => panic!("unexpected delta {other}"),
                };
                blocks[index].1.push_str(piece);
                blocks[index].2 += 1;
            }
            "content_block_stop" => {
                assert_eq!(open, Some(v["index"].as_u64().unwrap() as usize));
                open = None;
            }
            _ => {}
        }
    }
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0].0, json!({"type": "text", "text": ""}));
    assert_eq!(blocks[0].1, "Let me check that file.");
    assert!(blocks[0].2 >= 3);
    assert_eq!(
        blocks[1].0,
        json!({"type": "tool_use", "id": "call_1", "name": "read", "input": {}})
    );
    assert_eq!(blocks[1].1, r#"{"path":"src/lib.rs"}"#);
    assert_eq!(blocks[2].0["id"], "call_2");
    assert_eq!(blocks[2].1, r#"{"pattern": "fn ma"#);
    // An empty partial_json first, then 2-3 fragments.
    assert!((3..=4).contains(&blocks[1].2) && (3..=4).contains(&blocks[2].2));

    let delta = events[events.len() - 2].json();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 45);
    assert!(server.requests()[0].stream);
}

#[tokio::test]
async fn streaming_empty_reply_still_pings_and_stops() {
    let server = ModelServer::start(Script::new().reply(Reply::default()))
        .await
        .unwrap();
    let (bytes, err) = read_body(send(&server, &json!({"model": "m", "stream": true})).await).await;
    assert!(err.is_none());
    let names: Vec<String> = sse(&bytes).into_iter().map(|e| e.event.unwrap()).collect();
    assert_eq!(
        names,
        ["message_start", "ping", "message_delta", "message_stop"]
    );
}

#[tokio::test]
async fn by_position_answers_by_the_conversation_not_the_order() {
    let script = Script::new()
        .reply(Reply::text("first"))
        .reply(Reply::text("second"));
    let options = kaizen_model_server::Options {
        by_position: true,
        ..Default::default()
    };
    let server = ModelServer::start_with(script, options).await.unwrap();
    let opening = json!({"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"}
    ]});
    let later = json!({"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "first"},
        {"role": "user", "content": "again"}
    ]});
    for (request, expected) in [(&opening, "first"), (&opening, "first"), (&later, "second")] {
        let body: Value = send(&server, request).await.json().await.unwrap();
        assert_eq!(body["content"][0]["text"], expected, "{body}");
    }
    assert_eq!(server.remaining(), 2, "turns are not used up");
}
