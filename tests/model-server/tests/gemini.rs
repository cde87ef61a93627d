//! Gemini generateContent and streamGenerateContent.

mod common;

use common::{client, content_type, post, read_body, sse};
use kaizen_model_server::{Fault, ModelServer, Options, Reply, Script, Wire};
use serde_json::{Value, json};

/// POSTs `body` to `model:method`, with the query Gemini CLI adds when
/// streaming.
async fn send(server: &ModelServer, model: &str, method: &str, body: &Value) -> reqwest::Response {
    let query = if method == "streamGenerateContent" {
        "?alt=sse"
    } else {
        ""
    };
    let url = format!(
        "{}/v1beta/models/{model}:{method}{query}",
        server.gemini_base_url()
    );
    client()
        .post(url)
        .header("x-goog-api-key", "test")
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A request declaring one function, as Gemini CLI sends.
fn with_tools() -> Value {
    json!({
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [{"functionDeclarations": [{"name": "run_shell_command", "parameters": {"type": "object"}}]}],
    })
}

#[tokio::test]
async fn non_streaming_text_and_function_calls_echo_the_path_model() {
    let reply = Reply::text("Reading.")
        .with_tool("read", r#"{"path":"a.txt"}"#)
        .with_tool("grep", r#"{"pattern": "#)
        .with_usage(42, 7);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let mut request = with_tools();
    request["model"] = json!("not-this-one");
    let resp = send(&server, "gemini-test", "generateContent", &request).await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("application/json"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body["modelVersion"], "gemini-test",
        "the model is the path's"
    );
    assert_eq!(body["responseId"], "scripted0001");
    let candidate = &body["candidates"][0];
    assert_eq!(candidate["index"], 0);
    assert_eq!(candidate["finishReason"], "STOP");
    assert_eq!(candidate["content"]["role"], "model");
    assert_eq!(
        candidate["content"]["parts"],
        json!([
            {"text": "Reading."},
            {"functionCall": {"name": "read", "args": {"path": "a.txt"}}},
            {"functionCall": {"name": "grep", "args": r#"{"pattern": "#}},
        ])
    );
    assert_eq!(
        body["usageMetadata"],
        json!({"promptTokenCount": 42, "candidatesTokenCount": 7, "totalTokenCount": 49})
    );
    let recorded = &server.requests()[0];
    assert_eq!(recorded.wire, Wire::Gemini);
    assert_eq!(recorded.path, "/v1beta/models/gemini-test:generateContent");
    assert!(!recorded.stream);
    assert_eq!(recorded.headers["x-goog-api-key"], "test");
}

#[tokio::test]
async fn streaming_is_decided_by_the_path_and_sends_data_only_chunks() {
    let reply = Reply::text("Let me check that file for you.")
        .with_tool("run_shell_command", r#"{"command":"ls"}"#)
        .with_tool("read", r#"{"path":"b"}"#)
        .with_usage(321, 45);
    let server = ModelServer::start(Script::new().reply(reply))
        .await
        .unwrap();
    let mut request = with_tools();
    request["stream"] = json!(false);
    let resp = send(
        &server,
        "gemini-2.5-flash",
        "streamGenerateContent",
        &request,
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert!(content_type(&resp).starts_with("text/event-stream"));
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_none(), "{err:?}");
    let events = sse(&bytes);
    assert!(events.iter().all(|e| e.event.is_none()), "data: lines only");
    let chunks: Vec<Value> = events.iter().map(|e| e.json()).collect();
    assert!(chunks.len() >= 4, "text in several chunks, then the calls");

    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let last = i == chunks.len() - 1;
        assert_eq!(chunk["modelVersion"], "gemini-2.5-flash");
        assert_eq!(chunk["responseId"], "scripted0001");
        let candidate = &chunk["candidates"][0];
        assert_eq!(candidate["content"]["role"], "model");
        assert_eq!(candidate.get("finishReason").is_some(), last, "{chunk}");
        assert_eq!(chunk["usageMetadata"]["promptTokenCount"], 321);
        for part in candidate["content"]["parts"].as_array().unwrap() {
            if let Some(t) = part["text"].as_str() {
                text.push_str(t);
            } else {
                calls.push(part["functionCall"].clone());
            }
        }
    }
    assert_eq!(text, "Let me check that file for you.");
    assert_eq!(
        calls,
        [
            json!({"name": "run_shell_command", "args": {"command": "ls"}}),
            json!({"name": "read", "args": {"path": "b"}}),
        ]
    );
    let last = chunks.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(
        last["usageMetadata"],
        json!({"promptTokenCount": 321, "candidatesTokenCount": 45, "totalTokenCount": 366})
    );
    let recorded = &server.requests()[0];
    assert!(recorded.stream, "by the path, not the body");
    assert_eq!(
        recorded.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );
}

#[tokio::test]
async fn streaming_empty_reply_is_one_finishing_chunk() {
    let server = ModelServer::start(Script::new().reply(Reply::default()))
        .await
        .unwrap();
    let resp = send(&server, "g", "streamGenerateContent", &with_tools()).await;
    let (bytes, _) = read_body(resp).await;
    let events = sse(&bytes);
    assert_eq!(events.len(), 1);
    let chunk = events[0].json();
    assert_eq!(
        chunk["candidates"][0]["content"]["parts"],
        json!([{"text": ""}])
    );
    assert_eq!(chunk["candidates"][0]["finishReason"], "STOP");
}

#[tokio::test]
async fn status_faults_use_google_error_bodies() {
    let script = Script::new()
        .fault(Fault::Status {
            code: 429,
            retry_after: None,
            message: Some("quota".into()),
        })
        .fault(Fault::status(400))
        .fault(Fault::status(503));
    let server = ModelServer::start(script).await.unwrap();
    let expected = [
        (429, "RESOURCE_EXHAUSTED"),
        (400, "INVALID_ARGUMENT"),
        (503, "UNAVAILABLE"),
        (500, "INTERNAL"),
    ];
    for (code, status) in expected {
        let resp = send(&server, "g", "streamGenerateContent", &with_tools()).await;
        assert_eq!(resp.status(), code);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], code);
        assert_eq!(body["error"]["status"], status);
        assert!(body["error"]["message"].is_string());
    }
    let resp = send(&server, "g", "generateContent", &with_tools()).await;
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("script exhausted")
    );
}

#[tokio::test]
async fn requests_without_function_declarations_get_the_aside() {
    let mut script = Script::new().reply(Reply::text("the turn"));
    script.aside = Some(Reply::text("next speaker: user"));
    let server = ModelServer::start(script).await.unwrap();
    let asides = [
        json!({"contents": []}),
        json!({"contents": [], "tools": [{"googleSearch": {}}]}),
        json!({"contents": [], "tools": [{"functionDeclarations": []}]}),
    ];
    for request in &asides {
        let body: Value = send(&server, "g", "generateContent", request)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            body["candidates"][0]["content"]["parts"][0]["text"],
            "next speaker: user"
        );
    }
    assert_eq!(server.remaining(), 1);
    let body: Value = send(&server, "g", "generateContent", &with_tools())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        body["candidates"][0]["content"]["parts"][0]["text"],
        "the turn"
    );
}

#[tokio::test]
async fn by_position_counts_model_contents() {
    let script = Script::new()
        .reply(Reply::text("first"))
        .reply(Reply::text("second"));
    let options = Options {
        by_position: true,
        ..Default::default()
    };
    let server = ModelServer::start_with(script, options).await.unwrap();
    let later = json!({"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
    ]});
    for (request, expected) in [(&later, "second"), (&with_tools(), "first")] {
        let body: Value = send(&server, "g", "generateContent", request)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            body["candidates"][0]["content"]["parts"][0]["text"],
            expected
        );
    }
}

#[tokio::test]
async fn other_model_paths_are_not_found() {
    let server = ModelServer::start(Script::new().reply(Reply::text("kept")))
        .await
        .unwrap();
    let base = server.gemini_base_url();
    for path in [
        "/v1beta/models/g:countTokens",
        "/v1beta/models/g:embedContent",
        "/v1beta/models/:generateContent",
        "/v1beta/models/a/b:generateContent",
        "/v1beta/models/g",
        "/v1/models/g:generateContent",
        "/v1beta/tunedModels/g:generateContent",
    ] {
        let resp = post(&format!("{base}{path}"), &json!({"contents": []})).await;
        assert_eq!(resp.status(), 404, "{path}");
    }
    assert_eq!(server.remaining(), 1);
    assert!(server.requests().is_empty());
}
