//! Each wire format against the scripted model server: streamed text, tool
//! calls assembled from fragments, usage and cost, raw malformed arguments.

mod common;

use common::{ALL, Events, Wire, fast, provider, request};
use kaizen_llm::{PriceTable, StopReason, StreamEvent};
use kaizen_model_server::{ModelServer, Reply, Script};
use serde_json::{Value, json};

#[tokio::test]
async fn streams_text_and_a_fragmented_tool_call() {
    for wire in ALL {
        let text = "Let me read that file for you, it should not take long.";
        let server = ModelServer::start(
            Script::new().reply(
                Reply::text(text)
                    .with_tool("Read", r#"{"path": "a.txt", "limit": 20}"#)
                    .with_usage(1000, 200),
            ),
        )
        .await
        .expect("server");
        let provider = provider(wire, &server, fast());
        let events = Events::default();
        let response = provider
            .complete(&request(wire), &events.sink())
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));

        assert_eq!(response.text(), text, "{wire:?}");
        assert_eq!(events.text(), text, "{wire:?}");
        let deltas = events
            .all()
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count();
        assert!(deltas >= 3, "{wire:?}: text arrived in {deltas} deltas");

        let calls: Vec<_> = response.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{wire:?}");
        let (id, name, arguments) = calls[0];
        assert_eq!(name, "Read");
        let parsed: Value = serde_json::from_str(arguments).expect("arguments are JSON");
        assert_eq!(parsed, json!({"path": "a.txt", "limit": 20}), "{wire:?}");
        if wire != Wire::Ollama {
            // Fragments concatenated, byte for byte.
            assert_eq!(arguments, r#"{"path": "a.txt", "limit": 20}"#, "{wire:?}");
        }
        assert!(events.all().contains(&StreamEvent::ToolCallStarted {
            id: id.to_string(),
            name: "Read".into()
        }));
        assert_eq!(response.stop_reason, StopReason::ToolUse, "{wire:?}");
        assert_eq!(response.usage.input_tokens, 1000, "{wire:?}");
        assert_eq!(response.usage.output_tokens, 200, "{wire:?}");
        assert_eq!(response.model, wire.model());

        let cost = PriceTable::default()
            .cost_for(provider.name(), &response.model, &response.usage)
            .expect("known price");
        let expected = match wire {
            Wire::OpenAi => 1000.0 * 2.5e-6 + 200.0 * 10e-6,
            Wire::Anthropic => 1000.0 * 3e-6 + 200.0 * 15e-6,
            Wire::Ollama => 0.0,
        };
        assert!((cost - expected).abs() < 1e-12, "{wire:?}: {cost}");
        assert_eq!(server.requests().len(), 1);
        assert!(server.requests()[0].stream);
    }
}

#[tokio::test]
async fn several_tool_calls_and_text_only_turns() {
    for wire in ALL {
        let server = ModelServer::start(
            Script::new()
                .reply(
                    Reply::tool("Read", r#"{"path":"a"}"#)
                        .with_tool("Glob", r#"{"path":"**/*.rs"}"#),
                )
                .reply(Reply::text("All done.").with_usage(5, 3)),
        )
        .await
        .expect("server");
        let provider = provider(wire, &server, fast());
        let events = Events::default();
        let first = provider
            .complete(&request(wire), &events.sink())
            .await
            .expect("first");
        let calls: Vec<_> = first.tool_calls().map(|(_, name, _)| name).collect();
        assert_eq!(calls, vec!["Read", "Glob"], "{wire:?}");
        let ids: Vec<_> = first
            .tool_calls()
            .map(|(id, _, _)| id.to_string())
            .collect();
        assert_ne!(ids[0], ids[1], "{wire:?}: ids are unique");
        let args: Vec<Value> = first
            .tool_calls()
            .map(|(_, _, a)| serde_json::from_str(a).expect("json"))
            .collect();
        assert_eq!(args, vec![json!({"path": "a"}), json!({"path": "**/*.rs"})]);
        assert_eq!(first.text(), "");

        let second = provider
            .complete(&request(wire), &events.sink())
            .await
            .expect("second");
        assert_eq!(second.text(), "All done.");
        assert_eq!(second.tool_calls().count(), 0);
        assert_eq!(second.stop_reason, StopReason::EndTurn, "{wire:?}");
    }
}

#[tokio::test]
async fn malformed_arguments_are_passed_through_raw() {
    let raw = r#"{"path": "a.txt", "limit": "#;
    for wire in ALL {
        let server = ModelServer::start(Script::new().reply(Reply::tool("Read", raw)))
            .await
            .expect("server");
        let provider = provider(wire, &server, fast());
        let events = Events::default();
        let response = provider
            .complete(&request(wire), &events.sink())
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let calls: Vec<_> = response.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{wire:?}");
        assert_eq!(calls[0].2, raw, "{wire:?}");
    }
}
