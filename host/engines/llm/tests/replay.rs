//! Recording a live run, then replaying it with no server.

mod common;

use common::{ALL, ANTHROPIC_KEY, Events, OPENAI_KEY, fast, provider, request};
use kaizen_llm::{LlmErrorKind, Provider, Recorder, ReplayProvider, StreamEvent};
use kaizen_model_server::{ModelServer, Reply, Script};

#[tokio::test]
async fn record_then_replay_gives_the_same_responses() {
    for wire in ALL {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("session.jsonl");
        let recorded = {
            let server = ModelServer::start(
                Script::new()
                    .reply(
                        Reply::text("Reading.")
                            .with_tool("Read", r#"{"path":"a"}"#)
                            .with_usage(10, 5),
                    )
                    .reply(Reply::tool("Bash", r#"{"command": "#))
                    .reply(Reply::text("Done.").with_usage(20, 2)),
            )
            .await
            .expect("server");
            let recorder = Recorder::new(provider(wire, &server, fast()), &path).expect("recorder");
            let mut responses = Vec::new();
            for _ in 0..3 {
                responses.push(
                    recorder
                        .complete(&request(wire), &Events::default().sink())
                        .await
                        .expect("live"),
                );
            }
            responses
            // The server stops here: the replay cannot reach it.
        };
        let file = std::fs::read_to_string(&path).expect("recording");
        assert_eq!(file.lines().count(), 3);
        assert!(!file.contains(OPENAI_KEY) && !file.contains(ANTHROPIC_KEY));

        let replay = ReplayProvider::open(&path).expect("open");
        assert_eq!(replay.len(), 3);
        let events = Events::default();
        for expected in &recorded {
            let response = replay
                .complete(&request(wire), &events.sink())
                .await
                .expect("replayed");
            assert_eq!(&response, expected, "{wire:?}");
        }
        assert_eq!(events.text(), "Reading.Done.");
        assert!(
            events
                .all()
                .iter()
                .any(|e| matches!(e, StreamEvent::ToolCallStarted { name, .. } if name == "Bash"))
        );
        let error = replay
            .complete(&request(wire), &events.sink())
            .await
            .expect_err("exhausted");
        assert_eq!(error.kind, LlmErrorKind::Replay);
        assert!(
            error
                .message
                .contains("has 3 responses; this run asked for more")
        );
    }
}
