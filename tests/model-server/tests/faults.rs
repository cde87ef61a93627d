//! Scripted faults: error statuses, truncation, slowness, hanging.

mod common;

use common::{client, post, read_body};
use kaizen_model_server::{Fault, ModelServer, Reply, Script};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn status(code: u16, retry_after: Option<u64>, message: Option<&str>) -> Fault {
    Fault::Status {
        code,
        retry_after,
        message: message.map(str::to_owned),
    }
}

#[tokio::test]
async fn status_faults_use_each_wire_error_format() {
    let server = ModelServer::start(
        Script::new()
            .fault(status(429, Some(7), Some("slow down")))
            .fault(status(529, None, None))
            .fault(status(503, Some(1), Some("busy")))
            .reply(Reply::text("recovered")),
    )
    .await
    .unwrap();

    let resp = post(
        &format!("{}/chat/completions", server.openai_base_url()),
        &json!({"model": "m", "stream": true}),
    )
    .await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "7");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "slow down");
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    assert!(body["error"]["type"].is_string());

    let resp = post(
        &format!("{}/v1/messages", server.anthropic_base_url()),
        &json!({"model": "m"}),
    )
    .await;
    assert_eq!(resp.status(), 529);
    assert!(resp.headers().get("retry-after").is_none());
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "overloaded_error");
    assert!(body["error"]["message"].as_str().unwrap().contains("529"));

    let resp = post(
        &format!("{}/api/chat", server.ollama_host()),
        &json!({"model": "m"}),
    )
    .await;
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"error": "busy"})
    );

    let resp = post(
        &format!("{}/chat/completions", server.openai_base_url()),
        &json!({"model": "m"}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(server.remaining(), 0);
    assert_eq!(server.requests().len(), 4);
}

/// A truncated stream ends in a body error, before the end markers.
#[tokio::test]
async fn truncated_streams_close_early() {
    let reply = || {
        Reply::text("This answer will never be finished, sadly.")
            .with_tool("read", r#"{"path":"a.txt"}"#)
    };
    let server = ModelServer::start(
        Script::new()
            .fault(Fault::Truncated { reply: reply() })
            .fault(Fault::Truncated { reply: reply() })
            .fault(Fault::Truncated { reply: reply() })
            .reply(Reply::text("after")),
    )
    .await
    .unwrap();
    let cases = [
        (
            format!("{}/chat/completions", server.openai_base_url()),
            "[DONE]",
            "data: {",
        ),
        (
            format!("{}/v1/messages", server.anthropic_base_url()),
            "message_stop",
            "event: message_start",
        ),
        (
            format!("{}/api/chat", server.ollama_host()),
            "\"done\":true",
            "{\"",
        ),
    ];
    for (url, end_marker, start) in &cases {
        let resp = post(url, &json!({"model": "m", "stream": true})).await;
        assert_eq!(resp.status(), 200);
        let (bytes, err) = read_body(resp).await;
        let text = String::from_utf8_lossy(&bytes);
        assert!(err.is_some(), "{url}: body should fail, got {text}");
        assert!(text.starts_with(start), "{url}: {text}");
        assert!(!text.contains(end_marker), "{url}: {text}");
        assert!(!text.ends_with('\n'), "{url}: cut mid-event: {text}");
    }
    // The server is fine afterwards.
    let resp = post(&cases[0].0, &json!({"model": "m"})).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn truncated_non_streaming_body_is_short_of_its_length() {
    let server = ModelServer::start(Script::new().fault(Fault::Truncated {
        reply: Reply::text("a reasonably long answer to cut in half"),
    }))
    .await
    .unwrap();
    let resp = post(
        &format!("{}/v1/messages", server.anthropic_base_url()),
        &json!({"model": "m"}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let declared: usize = resp.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let (bytes, err) = read_body(resp).await;
    assert!(err.is_some());
    assert!(bytes.len() < declared, "{} of {declared}", bytes.len());
    assert!(serde_json::from_slice::<Value>(&bytes).is_err());
}

#[tokio::test]
async fn slow_delays_the_first_byte() {
    let server = ModelServer::start(Script::new().fault(Fault::Slow {
        delay_ms: 200,
        reply: Reply::text("finally"),
    }))
    .await
    .unwrap();
    let started = Instant::now();
    let resp = post(
        &format!("{}/chat/completions", server.openai_base_url()),
        &json!({"model": "m"}),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "finally");
}

#[tokio::test]
async fn slow_trips_a_short_client_timeout() {
    let server = ModelServer::start(Script::new().fault(Fault::Slow {
        delay_ms: 300,
        reply: Reply::text("too late"),
    }))
    .await
    .unwrap();
    let err = client()
        .post(format!("{}/api/chat", server.ollama_host()))
        .json(&json!({"model": "m"}))
        .timeout(Duration::from_millis(50))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
}

#[tokio::test]
async fn hang_never_answers_until_dropped() {
    let server = ModelServer::start(Script::new().fault(Fault::Hang).fault(Fault::Hang))
        .await
        .unwrap();
    let url = format!("{}/chat/completions", server.openai_base_url());
    let err = client()
        .post(&url)
        .json(&json!({"model": "m"}))
        .timeout(Duration::from_millis(100))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(server.requests().len(), 1, "a hung request is recorded");

    // A request without a timeout is released when the server goes away.
    let pending = tokio::spawn(async move { client().post(&url).json(&json!({})).send().await });
    while server.requests().len() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(server);
    let result = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("dropping the server releases the request")
        .unwrap();
    assert!(result.is_err(), "{result:?}");
}
