//! Several candidates of one request (`Provider::complete_n`): OpenAI asks
//! for them with `n` in one call; a compatible server that refuses `n` gets
//! separate calls; the other wires always make separate calls.

mod common;

use common::{ALL, Wire, fast, provider, request};
use kaizen_model_server::{Fault, ModelServer, Reply, Script};

fn texts(answers: &[Result<kaizen_llm::Response, kaizen_llm::LlmError>]) -> Vec<String> {
    answers
        .iter()
        .map(|answer| answer.as_ref().expect("an answer").text())
        .collect()
}

#[tokio::test]
async fn openai_asks_for_candidates_with_n_in_one_call() {
    let script = Script::new()
        .reply(Reply::text("first").with_usage(100, 5))
        .reply(Reply::text("second").with_usage(0, 6))
        .reply(Reply::tool("Read", r#"{"path":"a"}"#).with_usage(0, 7));
    let server = ModelServer::start(script).await.unwrap();
    let openai = provider(Wire::OpenAi, &server, fast());
    let req = request(Wire::OpenAi);
    let answers = openai.complete_n(&req, 3, &|_| {}).await;
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.requests()[0].body["n"], 3);
    assert_eq!(texts(&answers)[..2], ["first", "second"]);
    let third = answers[2].as_ref().unwrap();
    assert_eq!(third.tool_calls().count(), 1);
    // The request's usage, reported once, stays on the first.
    let usage: Vec<(u64, u64)> = answers
        .iter()
        .map(|a| a.as_ref().unwrap().usage)
        .map(|u| (u.input_tokens, u.output_tokens))
        .collect();
    assert_eq!(usage, [(100, 18), (0, 0), (0, 0)]);
}

#[tokio::test]
async fn a_server_that_refuses_n_gets_separate_calls_and_other_wires_always_do() {
    let refusing = Script::new()
        .fault(Fault::Status {
            code: 400,
            retry_after: None,
            message: Some("n is not supported".into()),
        })
        .reply(Reply::text("a"))
        .reply(Reply::text("b"));
    let server = ModelServer::start(refusing).await.unwrap();
    let openai = provider(Wire::OpenAi, &server, fast());
    let answers = openai.complete_n(&request(Wire::OpenAi), 2, &|_| {}).await;
    let mut got = texts(&answers);
    got.sort();
    assert_eq!(got, ["a", "b"]);
    assert_eq!(server.requests().len(), 3);
    assert!(server.requests()[1].body.get("n").is_none());

    for wire in ALL.into_iter().filter(|w| *w != Wire::OpenAi) {
        let script = Script::new()
            .reply(Reply::text("x"))
            .reply(Reply::text("y"));
        let server = ModelServer::start(script).await.unwrap();
        let answers = provider(wire, &server, fast())
            .complete_n(&request(wire), 2, &|_| {})
            .await;
        assert_eq!(answers.len(), 2, "{wire:?}");
        assert_eq!(server.requests().len(), 2, "{wire:?}");
    }
}
