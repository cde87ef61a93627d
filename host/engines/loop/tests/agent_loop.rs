//! The loop's rules, with a scripted provider and in-process tools (the
//! wire formats and real plugins are covered end to end by the CLI suite).

mod common;

use common::{Recorder, reply};

use kaizen_llm::{
    Block, CompletionFuture, EventSink, LlmError, LlmErrorKind, Provider, Request, Response,
    StreamEvent, Usage,
};
use kaizen_loop::{Agent, AgentConfig, SessionState};
use kaizen_protocol::{CancellationToken, Event, Status};
use kaizen_tools::{
    CallContext, Danger, FileRecord, Tool, ToolFuture, ToolOutput, ToolRegistry, ToolSpec,
};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Barrier;

/// Serves scripted responses in order and keeps every request.
struct Scripted {
    responses: Mutex<Vec<Result<Response, LlmError>>>,
    requests: Mutex<Vec<Request>>,
    delay: Duration,
}

impl Scripted {
    fn new(responses: Vec<Result<Response, LlmError>>) -> Self {
        Self {
            responses: Mutex::new(responses.into_iter().rev().collect()),
            requests: Mutex::default(),
            delay: Duration::ZERO,
        }
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(request.clone());
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let next = self.responses.lock().unwrap().pop();
            let response = next.unwrap_or_else(|| Ok(reply("script exhausted", &[])))?;
            events(StreamEvent::TextDelta(response.text()));
            Ok(response)
        })
    }
}

/// A tool whose calls are counted; read-only tools wait at a barrier so a
/// test can prove they run at the same time.
struct Probe {
    spec: ToolSpec,
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    barrier: Option<Arc<Barrier>>,
}

impl Tool for Probe {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, _ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            if let Some(barrier) = &self.barrier {
                barrier.wait().await;
            } else {
                tokio::task::yield_now().await;
            }
            self.running.fetch_sub(1, Ordering::SeqCst);
            let text = input["text"].as_str().unwrap_or_default();
            Ok(ToolOutput::text(format!("{}:{text}", self.spec.name)))
        })
    }
}

struct Tools {
    registry: ToolRegistry,
    peak: Arc<AtomicUsize>,
}

fn tools(read_barrier: Option<usize>) -> Tools {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let barrier = read_barrier.map(|n| Arc::new(Barrier::new(n)));
    let mut registry = ToolRegistry::new();
    for (name, read_only) in [("Look", true), ("Change", false)] {
        registry
            .register(Arc::new(Probe {
                spec: ToolSpec {
                    name: name.into(),
                    description: format!("{name} something"),
                    input_schema: json!({
                        "type": "object",
                        "properties": {"text": {"type": "string"}},
                        "required": ["text"]
                    }),
                    danger: Danger::Safe,
                    read_only,
                },
                running: running.clone(),
                peak: peak.clone(),
                barrier: if read_only { barrier.clone() } else { None },
            }))
            .unwrap();
    }
    Tools { registry, peak }
}

async fn run(
    provider: &Scripted,
    tools: &ToolRegistry,
    config: impl FnOnce(&mut AgentConfig),
    interrupt: &CancellationToken,
) -> (kaizen_protocol::RunResult, SessionState) {
    let mut agent_config = AgentConfig::new("scripted-model", std::env::temp_dir());
    config(&mut agent_config);
    let pricing = |_: &str, _: &Usage| 1.0;
    let observer = Recorder::default();
    let agent = Agent {
        provider,
        tools,
        pricing: &pricing,
        config: agent_config,
        observer: &observer,
        journal: None,
        guard: std::sync::Arc::new(kaizen_loop::Guard::allow_all()),
    };
    let mut state = SessionState::new("s-test", "scripted-model");
    let result = agent.run(&mut state, "do the task", interrupt).await;
    (result, state)
}

fn tool_results(state: &SessionState) -> Vec<(String, String, bool)> {
    state
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let text = match &content[0] {
                    Block::Text { text } => text.clone(),
                    _ => String::new(),
                };
                Some((tool_use_id.clone(), text, *is_error))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_claim_of_being_done_does_not_stop_the_loop_while_tools_are_called() {
    let provider = Scripted::new(vec![
        Ok(reply(
            "I am finished. Task complete.",
            &[("Look", r#"{"text":"a"}"#)],
        )),
        Ok(reply("Here is the answer.", &[])),
    ]);
    let t = tools(None);
    let (result, state) = run(&provider, &t.registry, |_| {}, &CancellationToken::new()).await;
    assert_eq!(result.status, Status::Complete);
    assert_eq!(result.cycles_used, 2);
    assert_eq!(result.output, "Here is the answer.");
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tokens_used.total, 220);
    assert_eq!(result.cost_usd, 2.0);
    assert_eq!(tool_results(&state)[0].1, "Look:a");
    // The second request carried the tool result back.
    let requests = provider.requests.lock().unwrap();
    assert_eq!(requests[1].messages.len(), 3);
    assert!(requests[0].system.contains("Working directory"));
    assert_eq!(requests[0].tools.len(), 2);
}

#[tokio::test]
async fn tool_failures_become_results_and_the_loop_goes_on() {
    let provider = Scripted::new(vec![
        Ok(reply(
            "",
            &[
                ("Nope", "{}"),
                ("Look", "{not json"),
                ("Look", r#"{"text": 5}"#),
                ("Look", r#"{"text":"fine"}"#),
            ],
        )),
        Ok(reply("done", &[])),
    ]);
    let t = tools(None);
    let (result, state) = run(&provider, &t.registry, |_| {}, &CancellationToken::new()).await;
    assert_eq!(result.status, Status::Complete);
    let results = tool_results(&state);
    assert_eq!(results.len(), 4);
    assert!(
        results[0].2 && results[0].1.contains("no tool named `Nope`"),
        "{results:?}"
    );
    assert!(
        results[1].2 && results[1].1.contains("not valid JSON"),
        "{results:?}"
    );
    assert!(
        results[2].2 && results[2].1.contains("input schema"),
        "{results:?}"
    );
    assert!(!results[3].2 && results[3].1 == "Look:fine", "{results:?}");
    let statuses: Vec<&str> = result
        .tool_calls
        .iter()
        .map(|c| c.status.as_str())
        .collect();
    assert_eq!(statuses, ["error", "error", "error", "success"]);
    assert_eq!(result.tool_calls[1].arguments, json!("{not json"));
}

#[tokio::test]
async fn read_only_calls_run_together_and_answer_in_order() {
    let calls: Vec<(&str, String)> = (0..3)
        .map(|i| ("Look", format!(r#"{{"text":"{i}"}}"#)))
        .collect();
    let calls: Vec<(&str, &str)> = calls.iter().map(|(n, a)| (*n, a.as_str())).collect();
    let provider = Scripted::new(vec![Ok(reply("", &calls)), Ok(reply("ok", &[]))]);
    // The barrier opens only when all three are running at once.
    let t = tools(Some(3));
    let (result, state) = run(&provider, &t.registry, |_| {}, &CancellationToken::new()).await;
    assert_eq!(result.status, Status::Complete);
    assert_eq!(t.peak.load(Ordering::SeqCst), 3);
    let ids: Vec<String> = tool_results(&state).into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["call_0_Look", "call_1_Look", "call_2_Look"]);
}

#[tokio::test]
async fn calls_that_change_things_run_one_at_a_time() {
    let provider = Scripted::new(vec![
        Ok(reply(
            "",
            &[
                ("Change", r#"{"text":"1"}"#),
                ("Change", r#"{"text":"2"}"#),
                ("Change", r#"{"text":"3"}"#),
            ],
        )),
        Ok(reply("ok", &[])),
    ]);
    let t = tools(None);
    let (_, state) = run(&provider, &t.registry, |_| {}, &CancellationToken::new()).await;
    assert_eq!(t.peak.load(Ordering::SeqCst), 1);
    let texts: Vec<String> = tool_results(&state).into_iter().map(|r| r.1).collect();
    assert_eq!(texts, ["Change:1", "Change:2", "Change:3"]);
}

#[tokio::test]
async fn max_cycles_stops_with_its_status() {
    let looping: Vec<_> = (0..10)
        .map(|_| Ok(reply("", &[("Look", r#"{"text":"x"}"#)])))
        .collect();
    let provider = Scripted::new(looping);
    let t = tools(None);
    let (result, _) = run(
        &provider,
        &t.registry,
        |c| c.max_cycles = 3,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(result.status, Status::MaxCycles);
    assert_eq!(result.status.exit_code(), 3);
    assert_eq!(result.cycles_used, 3);
    assert!(result.error_message.unwrap().contains("--max-cycles"));
}

#[tokio::test]
async fn the_budget_stops_the_run() {
    let looping: Vec<_> = (0..10)
        .map(|_| Ok(reply("", &[("Look", r#"{"text":"x"}"#)])))
        .collect();
    let provider = Scripted::new(looping);
    let t = tools(None);
    // Each call costs $1.
    let (result, _) = run(
        &provider,
        &t.registry,
        |c| c.budget_usd = 2.5,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(result.status, Status::BudgetExceeded);
    assert_eq!(result.cycles_used, 3);
    assert_eq!(result.cost_usd, 3.0);
}

#[tokio::test]
async fn the_wall_clock_limit_stops_a_slow_model() {
    let mut provider = Scripted::new(vec![Ok(reply("late", &[]))]);
    provider.delay = Duration::from_secs(30);
    let t = tools(None);
    let (result, _) = run(
        &provider,
        &t.registry,
        |c| c.timeout = Some(Duration::from_millis(50)),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(result.status, Status::Timeout);
    assert!(
        result
            .error_message
            .unwrap()
            .contains("waiting for the model")
    );
}

#[tokio::test]
async fn an_interrupt_ends_the_run_with_its_status() {
    let provider = Scripted::new(vec![Ok(reply("never", &[]))]);
    let t = tools(None);
    let interrupt = CancellationToken::new();
    interrupt.cancel();
    let (result, _) = run(&provider, &t.registry, |_| {}, &interrupt).await;
    assert_eq!(result.status, Status::Interrupted);
    assert_eq!(result.status.exit_code(), 130);
    assert_eq!(result.cycles_used, 0);
}

#[tokio::test]
async fn a_provider_error_ends_the_run_as_an_error() {
    let provider = Scripted::new(vec![Err(LlmError {
        kind: LlmErrorKind::Auth,
        message: "the API key was refused; check OPENAI_API_KEY".into(),
    })]);
    let t = tools(None);
    let (result, state) = run(&provider, &t.registry, |_| {}, &CancellationToken::new()).await;
    assert_eq!(result.status, Status::Error);
    assert_eq!(
        result.error_message.as_deref(),
        Some("the API key was refused; check OPENAI_API_KEY")
    );
    assert_eq!(state.status, Some(Status::Error));
}

#[tokio::test]
async fn long_tool_output_is_cut_with_a_note() {
    let big = "x".repeat(100);
    let args = format!(r#"{{"text":"{big}"}}"#);
    let provider = Scripted::new(vec![
        Ok(reply("", &[("Look", &args)])),
        Ok(reply("ok", &[])),
    ]);
    let t = tools(None);
    let (_, state) = run(
        &provider,
        &t.registry,
        |c| c.max_result_chars = 20,
        &CancellationToken::new(),
    )
    .await;
    let text = &tool_results(&state)[0].1;
    assert!(text.starts_with("Look:xxxxx\n"), "{text}");
    assert!(
        text.contains("105 characters is more than the 20"),
        "{text}"
    );
    assert!(text.ends_with("\n\nxxxxxxxxxx"), "the end is kept: {text}");
}

#[tokio::test]
async fn the_state_serializes_and_round_trips() {
    let provider = Scripted::new(vec![
        Ok(reply("", &[("Look", r#"{"text":"a"}"#)])),
        Ok(reply("ok", &[])),
    ]);
    let t = tools(None);
    let (_, state) = run(&provider, &t.registry, |_| {}, &CancellationToken::new()).await;
    let text = serde_json::to_string(&state).unwrap();
    let back: SessionState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, state);
}

/// Reports the session's note for `/notes/file` (or `none`), then notes the
/// file with its `text` as the hash and makes the todo list one item of it.
struct Remember {
    spec: ToolSpec,
}

impl Tool for Remember {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let text = input["text"].as_str().unwrap_or_default();
            let seen = ctx
                .notes
                .file_note("/notes/file")
                .map_or("none".to_string(), |record| record.hash);
            ctx.notes.note_file(
                "/notes/file",
                FileRecord {
                    hash: text.into(),
                    mtime_ms: 1,
                },
            );
            ctx.notes.set_todos(vec![json!({"content": text})]);
            Ok(ToolOutput::text(seen))
        })
    }
}

#[tokio::test]
async fn tools_notes_live_in_the_session_state_between_steps() {
    let provider = Scripted::new(vec![
        Ok(reply("", &[("Remember", r#"{"text":"first"}"#)])),
        Ok(reply("", &[("Remember", r#"{"text":"second"}"#)])),
        Ok(reply("done", &[])),
    ]);
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(Remember {
            spec: ToolSpec {
                name: "Remember".into(),
                description: "Remembers".into(),
                input_schema: json!({"type": "object"}),
                danger: Danger::Safe,
                read_only: false,
            },
        }))
        .unwrap();
    let pricing = |_: &str, _: &Usage| 0.0;
    let observer = Recorder::default();
    let agent = Agent {
        provider: &provider,
        tools: &registry,
        pricing: &pricing,
        config: AgentConfig::new("scripted-model", std::env::temp_dir()),
        observer: &observer,
        journal: None,
        guard: std::sync::Arc::new(kaizen_loop::Guard::allow_all()),
    };
    let mut state = SessionState::new("s-notes", "scripted-model");
    // What an earlier run (or a resumed checkpoint) left in the state.
    state.todos = vec![json!({"content": "older"})];
    agent
        .run(&mut state, "remember", &CancellationToken::new())
        .await;
    let results: Vec<String> = tool_results(&state).into_iter().map(|r| r.1).collect();
    assert_eq!(results, ["none", "first"]);
    assert_eq!(state.read_files["/notes/file"].hash, "second");
    assert_eq!(state.todos, [json!({"content": "second"})]);
    let todo_events: Vec<Vec<serde_json::Value>> = observer
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            Event::Todos { todos } => Some(todos.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        todo_events,
        [
            vec![json!({"content": "first"})],
            vec![json!({"content": "second"})]
        ]
    );
}
