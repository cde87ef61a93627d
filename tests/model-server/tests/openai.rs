//! OpenAI Chat Completions, streaming and not.

mod common;

use common::{content_type, post, read_body, sse};
use kaizen_model_server::{Fault, ModelServer, Options, Reply, Script, Wire};
use serde_json::{Value, json};

fn url(server: &ModelServer) -> String {
    format!("{}/chat/completions", server.openai_base_url())
}

#[tokio::test]
async fn non_streaming_text() {
    let server =
        ModelServer::start(Script::new().reply(Reply::text("Hello there").with_usage(10, 3)))
            .await
            .unwrap();
    let resp = post(&url(&server), &json!({"model": "gpt-test", "messages": []})).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("application/json"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(body["created"].as_u64().unwrap() > 1_600_000_000);
    assert_eq!(body["model"], "gpt-test");
    let choice = &body["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "Hello there");
    assert!(choice["message"].get("tool_calls").is_none());
    assert_eq!(
        body["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13})
    );
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn non_streaming_tool_calls_keep_raw_arguments() {
    let reply = Reply::tool("read", r#"{"path":"a.txt"}"#)
        .with_tool_id("custom_7", "write", r#"{"path": "b"#)
        .with_model("gpt-scripted");
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let body: Value = post(&url(&server), &json!({"model": "gpt-test"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["model"], "gpt-scripted");
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        message["tool_calls"],
        json!([
            {"id": "call_1", "type": "function",
             "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}},
            {"id": "custom_7", "type": "function",
             "function": {"name": "write", "arguments": "{\"path\": \"b"}},
        ])
    );
}

/// Reassembles a streamed completion the way a client must.
#[derive(Default, Debug)]
struct Assembled {
    text: String,
    content_deltas: usize,
    /// (id, name, arguments, argument fragments) by index.
    calls: Vec<(String, String, String, usize)>,
    finish: Option<String>,
    usage: Option<Value>,
}

fn assemble(chunks: &[Value]) -> Assembled {
    let mut a = Assembled::default();
    for chunk in chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            assert_eq!(chunk["choices"], json!([]));
            a.usage = Some(usage.clone());
            continue;
        }
        let choice = &chunk["choices"][0];
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            a.text.push_str(text);
            a.content_deltas += 1;
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            if let Some(id) = call["id"].as_str() {
                assert_eq!(index, a.calls.len(), "a new call takes the next index");
                assert_eq!(call["type"], "function");
                assert_eq!(call["function"]["arguments"], "");
                let name = call["function"]["name"].as_str().unwrap().to_owned();
                a.calls.push((id.to_owned(), name, String::new(), 0));
            } else {
                assert!(call["function"].get("name").is_none());
                let fragment = call["function"]["arguments"].as_str().unwrap();
                let entry = &mut a.calls[index];
                entry.2.push_str(fragment);
                entry.3 += 1;
            }
        }
        if let Some(finish) = choice["finish_reason"].as_str() {
            assert_eq!(delta, &json!({}));
            a.finish = Some(finish.to_owned());
        }
    }
    a
}

#[tokio::test]
async fn streaming_text_tool_deltas_and_usage_chunk() {
    let reply = Reply::text("Let me look at both files for you.")
        .with_tool("read", r#"{"path":"src/main.rs"}"#)
        .with_tool("read", r#"{"path": "Cargo.toml", "bad": tru"#)
        .with_usage(100, 20);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let request = json!({
        "model": "gpt-test",
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}],
    });
    let resp = post(&url(&server), &request).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("text/event-stream"));
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none(), "{err:?}");
    let events = sse(&bytes);
    assert!(events.iter().all(|e| e.event.is_none()));
    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| e.json())
        .collect();

    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant"})
    );
    let id = chunks[0]["id"].clone();
    assert!(
        chunks
            .iter()
            .all(|c| c["id"] == id && c["model"] == "gpt-test")
    );
    // With include_usage, every chunk but the last carries "usage": null.
    let (last, rest) = chunks.split_last().unwrap();
    assert!(
        rest.iter()
            .all(|c| c["usage"].is_null() && c.get("usage").is_some())
    );
    assert_eq!(
        last["usage"],
        json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
    );

    let a = assemble(&chunks);
    assert_eq!(a.text, "Let me look at both files for you.");
    assert!(a.content_deltas >= 3, "{a:?}");
    assert_eq!(a.calls.len(), 2);
    assert_eq!(a.calls[0].0, "call_1");
    assert_eq!(a.calls[0].1, "read");
    assert_eq!(a.calls[0].2, r#"{"path":"src/main.rs"}"#);
    assert_eq!(a.calls[1].0, "call_2");
    assert_eq!(a.calls[1].2, r#"{"path": "Cargo.toml", "bad": tru"#);
    assert!(a.calls.iter().all(|c| (2..=3).contains(&c.3)), "{a:?}");
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));

    let recorded = server.requests();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].wire, Wire::OpenAi);
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert!(recorded[0].stream);
    assert_eq!(recorded[0].body, request);
}

#[tokio::test]
async fn streaming_without_include_usage_sends_no_usage() {
    let server =
        ModelServer::start(Script::new().reply(Reply::text("ok ✓ héllo wörld").with_usage(5, 1)))
            .await
            .unwrap();
    let resp = post(&url(&server), &json!({"model": "m", "stream": true})).await;
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none());
    let events = sse(&bytes);
    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| e.json())
        .collect();
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    let a = assemble(&chunks);
    assert_eq!(
        a.text, "ok ✓ héllo wörld",
        "bytes reassembled before decoding"
    );
    assert_eq!(a.finish.as_deref(), Some("stop"));
    assert!(a.usage.is_none());
}

#[tokio::test]
async fn call_ids_count_across_turns() {
    let server = ModelServer::start(
        Script::new()
            .reply(Reply::tool("a", "{}"))
            .reply(Reply::tool("b", "{}").with_tool("c", "{}")),
    )
    .await
    .unwrap();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let body: Value = post(&url(&server), &json!({"model": "m"}))
            .await
            .json()
            .await
            .unwrap();
        for call in body["choices"][0]["message"]["tool_calls"]
            .as_array()
            .unwrap()
        {
            ids.push(call["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
}

/// Without pacing (a zero-latency model) answers still stream as chunked
/// SSE that reassembles to the same reply, and a truncation still delivers
/// its partial answer before the break.
#[tokio::test]
async fn a_no_pace_server_streams_correctly() {
    let reply = || {
        Reply::text("ok ✓ héllo wörld")
            .with_tool("read", r#"{"path":"a.txt"}"#)
            .with_usage(7, 2)
    };
    let server = ModelServer::start_with(
        Script::new()
            .reply(reply())
            .fault(Fault::Truncated { reply: reply() }),
        Options {
            pace: None,
            ..Options::default()
        },
    )
    .await
    .unwrap();
    let request = json!({
        "model": "m",
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let resp = post(&url(&server), &request).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("text/event-stream"));
    assert!(resp.headers().get("content-length").is_none());
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none(), "{err:?}");
    let events = sse(&bytes);
    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| e.json())
        .collect();
    let a = assemble(&chunks);
    assert_eq!(a.text, "ok ✓ héllo wörld");
    assert_eq!(a.calls.len(), 1);
    assert_eq!(a.calls[0].1, "read");
    assert_eq!(a.calls[0].2, r#"{"path":"a.txt"}"#);
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));
    assert_eq!(
        a.usage,
        Some(json!({"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}))
    );

    let resp = post(&url(&server), &request).await;
    let (bytes, err) = read_body(resp).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(err.is_some(), "body should fail, got {text}");
    assert!(text.starts_with("data: {"), "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
}
