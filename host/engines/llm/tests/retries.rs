//! Retries, timeouts and error categories against the scripted model
//! server. Assertions are on attempts (requests the server saw) and on
//! `Retrying` events, never on elapsed time.

mod common;

use common::{ALL, Events, OPENAI_KEY, Wire, fast, provider, request};
use kaizen_llm::{
    ApiKey, LlmErrorKind, OpenAiConfig, OpenAiProvider, Provider, RetryPolicy, StreamEvent,
};
use kaizen_model_server::{Fault, ModelServer, Reply, Script};
use std::time::Duration;

#[tokio::test]
async fn server_error_then_success_is_retried() {
    for wire in ALL {
        let server = ModelServer::start(
            Script::new()
                .fault(Fault::status(500))
                .reply(Reply::text("recovered")),
        )
        .await
        .expect("server");
        let events = Events::default();
        let response = provider(wire, &server, fast())
            .complete(&request(wire), &events.sink())
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(response.text(), "recovered");
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        assert_eq!(events.retries(), vec![2], "{wire:?}");
    }
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    for wire in ALL {
        let server = ModelServer::start(
            Script::new()
                .fault(Fault::Status {
                    code: 429,
                    retry_after: Some(1),
                    message: Some("slow down".into()),
                })
                .reply(Reply::text("ok")),
        )
        .await
        .expect("server");
        let events = Events::default();
        let response = provider(wire, &server, fast())
            .complete(&request(wire), &events.sink())
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(response.text(), "ok");
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        let retry = events
            .all()
            .into_iter()
            .find(|e| matches!(e, StreamEvent::Retrying { .. }))
            .expect("a retry event");
        let StreamEvent::Retrying { attempt, error } = retry else {
            unreachable!()
        };
        assert_eq!(attempt, 2);
        assert!(
            error.contains("429") && error.contains("slow down"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let server = ModelServer::start(
        Script::new()
            .fault(Fault::status(529))
            .fault(Fault::status(503))
            .reply(Reply::text("ok")),
    )
    .await
    .expect("server");
    let events = Events::default();
    let response = provider(Wire::Anthropic, &server, fast())
        .complete(&request(Wire::Anthropic), &events.sink())
        .await
        .expect("retried");
    assert_eq!(response.text(), "ok");
    assert_eq!(events.retries(), vec![2, 3]);
}

#[tokio::test]
async fn unauthorized_names_the_variable_and_is_not_retried() {
    for wire in ALL {
        let server = ModelServer::start(Script::new().fault(Fault::Status {
            code: 401,
            retry_after: None,
            message: Some("invalid x-api-key".into()),
        }))
        .await
        .expect("server");
        let events = Events::default();
        let error = provider(wire, &server, fast())
            .complete(&request(wire), &events.sink())
            .await
            .expect_err("401");
        assert_eq!(error.kind, LlmErrorKind::Auth, "{wire:?}");
        assert!(
            error.message.contains(&format!("check {}", wire.key_var())),
            "{wire:?}: {}",
            error.message
        );
        assert!(error.message.contains("invalid x-api-key"));
        assert!(!error.message.contains(common::OPENAI_KEY));
        assert!(!error.message.contains(common::ANTHROPIC_KEY));
        assert_eq!(server.requests().len(), 1, "{wire:?}");
        assert!(events.retries().is_empty());
    }
}

#[tokio::test]
async fn bad_request_carries_the_provider_message() {
    for wire in ALL {
        for code in [400, 404, 422] {
            let server = ModelServer::start(Script::new().fault(Fault::Status {
                code,
                retry_after: None,
                message: Some("model `nope` does not exist".into()),
            }))
            .await
            .expect("server");
            let error = provider(wire, &server, fast())
                .complete(&request(wire), &Events::default().sink())
                .await
                .expect_err("refused");
            assert_eq!(error.kind, LlmErrorKind::BadRequest, "{wire:?} {code}");
            assert!(
                error.message.contains("model `nope` does not exist"),
                "{wire:?}: {}",
                error.message
            );
            assert_eq!(server.requests().len(), 1);
        }
    }
}

#[tokio::test]
async fn repeated_server_errors_give_up_after_four_attempts() {
    for wire in ALL {
        let mut script = Script::new();
        for _ in 0..5 {
            script = script.fault(Fault::status(500));
        }
        let server = ModelServer::start(script).await.expect("server");
        let events = Events::default();
        let error = provider(wire, &server, fast())
            .complete(&request(wire), &events.sink())
            .await
            .expect_err("gives up");
        assert_eq!(error.kind, LlmErrorKind::Server, "{wire:?}");
        assert!(
            error.message.contains("after 4 attempts"),
            "{}",
            error.message
        );
        assert_eq!(server.requests().len(), 4, "{wire:?}");
        assert_eq!(server.remaining(), 1);
        assert_eq!(events.retries(), vec![2, 3, 4]);
    }
}

#[tokio::test]
async fn truncated_stream_is_retried() {
    for wire in ALL {
        let text = "This answer is long enough to be cut in the middle of the stream.";
        let server = ModelServer::start(
            Script::new()
                .fault(Fault::Truncated {
                    reply: Reply::text(text).with_tool("Read", r#"{"path":"a"}"#),
                })
                .reply(Reply::text(text).with_tool("Read", r#"{"path":"a"}"#)),
        )
        .await
        .expect("server");
        let events = Events::default();
        let response = provider(wire, &server, fast())
            .complete(&request(wire), &events.sink())
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(response.text(), text, "{wire:?}");
        assert_eq!(response.tool_calls().count(), 1);
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        assert_eq!(events.retries(), vec![2], "{wire:?}");
    }
}

#[tokio::test]
async fn slow_first_byte_times_out() {
    for wire in ALL {
        let server = ModelServer::start(
            Script::new()
                .fault(Fault::Slow {
                    delay_ms: 5_000,
                    reply: Reply::text("late"),
                })
                .fault(Fault::Hang),
        )
        .await
        .expect("server");
        let mut http = fast();
        http.first_byte_timeout = Duration::from_millis(200);
        http.retry.max_attempts = 2;
        let events = Events::default();
        let error = provider(wire, &server, http)
            .complete(&request(wire), &events.sink())
            .await
            .expect_err("times out");
        assert_eq!(
            error.kind,
            LlmErrorKind::Timeout,
            "{wire:?}: {}",
            error.message
        );
        assert!(
            error.message.contains("after 2 attempts"),
            "{}",
            error.message
        );
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        assert_eq!(events.retries(), vec![2]);
    }
}

#[tokio::test]
async fn slow_but_within_the_timeout_succeeds() {
    let server = ModelServer::start(Script::new().fault(Fault::Slow {
        delay_ms: 50,
        reply: Reply::text("made it"),
    }))
    .await
    .expect("server");
    let response = provider(Wire::OpenAi, &server, fast())
        .complete(&request(Wire::OpenAi), &Events::default().sink())
        .await
        .expect("in time");
    assert_eq!(response.text(), "made it");
}

#[tokio::test]
async fn connection_refused_is_a_network_error_after_retries() {
    // A port that was free a moment ago and has no listener now.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let mut config = OpenAiConfig::new(
        Some(ApiKey::new(OPENAI_KEY)),
        Some(format!("http://127.0.0.1:{port}/v1")),
    );
    config.http = fast();
    config.http.retry = RetryPolicy {
        max_attempts: 3,
        ..config.http.retry
    };
    let provider = OpenAiProvider::new(config).expect("provider");
    let events = Events::default();
    let error = provider
        .complete(&request(Wire::OpenAi), &events.sink())
        .await
        .expect_err("refused");
    assert_eq!(error.kind, LlmErrorKind::Network, "{}", error.message);
    assert!(
        error.message.contains("could not reach OpenAI"),
        "{}",
        error.message
    );
    assert!(error.message.contains("after 3 attempts"));
    assert_eq!(events.retries(), vec![2, 3]);
}

#[tokio::test]
async fn a_stream_that_goes_silent_times_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // The scripted server has no "stall mid-stream" fault: a raw socket
    // sends the headers and one event, then nothing.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let stalls = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = socket.read(&mut buf).await;
            let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                event.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            held.push(socket);
        }
    });
    let mut config = OpenAiConfig::new(
        Some(ApiKey::new(OPENAI_KEY)),
        Some(format!("http://127.0.0.1:{port}/v1")),
    );
    config.http = fast();
    config.http.idle_timeout = Duration::from_millis(200);
    config.http.retry.max_attempts = 2;
    let events = Events::default();
    let error = OpenAiProvider::new(config)
        .expect("provider")
        .complete(&request(Wire::OpenAi), &events.sink())
        .await
        .expect_err("stalls");
    assert_eq!(error.kind, LlmErrorKind::Timeout, "{}", error.message);
    assert!(error.message.contains("went silent"), "{}", error.message);
    // Each attempt streamed its delta before stalling (the documented
    // repeat of a retried stream).
    assert_eq!(events.text(), "hihi");
    assert_eq!(events.retries(), vec![2]);
    stalls.abort();
}
