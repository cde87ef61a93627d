//! Sub-agents through the loop: a tool hands a task to a fresh loop with a
//! tool subset; the sub-agent shares the parent's budget, deadline and
//! interrupt, and only its final message comes back. The provider is
//! scripted per conversation (keyed by its first user message), so that
//! concurrent sub-agents get their own turns.

mod common;

use common::{Recorder, Routed, TaskTool, reply_json as reply};

use kaizen_llm::{Block, Request, Response, Usage};
use kaizen_loop::{Agent, AgentConfig, SessionState};
use kaizen_protocol::{CancellationToken, Event, RunResult, Status};
use kaizen_tools::{CallContext, Danger, Tool, ToolFuture, ToolOutput, ToolRegistry, ToolSpec};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;

fn task(prompt: &str, kind: &str) -> (&'static str, serde_json::Value) {
    (
        "Task",
        json!({"description": "a task", "prompt": prompt, "subagent_type": kind}),
    )
}

fn spec(name: &str, read_only: bool) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} something"),
        input_schema: json!({"type": "object"}),
        danger: Danger::Safe,
        read_only,
    }
}

/// Answers with its name; waits at the barrier when it has one.
struct Plain(ToolSpec, Option<Arc<Barrier>>);

impl Tool for Plain {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, _: &'a CallContext, _: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            if let Some(barrier) = &self.1 {
                barrier.wait().await;
            }
            Ok(ToolOutput::text(format!("{} done", self.0.name)))
        })
    }
}

fn registry(look_barrier: Option<Arc<Barrier>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(TaskTool(spec("Task", true))))
        .unwrap();
    registry
        .register(Arc::new(Plain(spec("Look", true), look_barrier)))
        .unwrap();
    registry
        .register(Arc::new(Plain(spec("Change", false), None)))
        .unwrap();
    registry
}

struct Ran {
    result: RunResult,
    state: SessionState,
    events: Vec<Event>,
}

async fn run(
    provider: &Routed,
    tools: &ToolRegistry,
    config: impl FnOnce(&mut AgentConfig),
    interrupt: &CancellationToken,
) -> Ran {
    let mut agent_config = AgentConfig::new("scripted-model", std::env::temp_dir());
    config(&mut agent_config);
    // Every model call costs $1.
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
    let mut state = SessionState::new("parent", "scripted-model");
    let result = agent.run(&mut state, "main task", interrupt).await;
    let events = observer.0.into_inner().unwrap();
    Ran {
        result,
        state,
        events,
    }
}

fn tool_results(state: &SessionState) -> Vec<(String, bool)> {
    state
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            Block::ToolResult {
                content, is_error, ..
            } => match &content[0] {
                Block::Text { text } => Some((text.clone(), *is_error)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn tool_names(request: &Request) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_sub_agent_works_with_its_own_conversation_and_its_answer_comes_back() {
    let provider = Routed::default()
        .with(
            "main task",
            vec![
                reply("", &[task("find the thing", "general-purpose")]),
                reply("All done.", &[]),
            ],
        )
        .with(
            "find the thing",
            vec![
                reply("", &[("Look", json!({})), ("Change", json!({}))]),
                reply("The thing is in a.rs", &[]),
            ],
        );
    let ran = run(
        &provider,
        &registry(None),
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(ran.result.status, Status::Complete);
    assert_eq!(ran.result.output, "All done.");
    assert_eq!(
        tool_results(&ran.state),
        [(
            "The thing is in a.rs [complete, 2 cycles, 2 tools, $2]".to_string(),
            false
        )]
    );
    // The parent's own cycles; the sub-agent's spending is the session's.
    assert_eq!(ran.result.cycles_used, 2);
    assert_eq!(ran.result.cost_usd, 4.0);
    assert_eq!(ran.result.tokens_used.input, 400);
    assert_eq!(ran.result.tool_calls.len(), 1, "the parent's calls only");

    let sub = provider.requests_of("find the thing");
    assert_eq!(sub.len(), 2);
    assert_eq!(tool_names(&sub[0]), ["Look", "Change"], "never Task");
    assert!(
        sub[0].system.contains("You are a sub-agent"),
        "{}",
        sub[0].system
    );
    assert_eq!(
        sub[0].messages.len(),
        1,
        "nothing of the parent's conversation"
    );
    let main = provider.requests_of("main task");
    assert!(!main[0].system.contains("sub-agent"));
    assert_eq!(tool_names(&main[0]), ["Task", "Look", "Change"]);

    let nested: Vec<&str> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            Event::SubAgent { call_id, event } => {
                assert_eq!(call_id, "call_0_Task");
                Some(match **event {
                    Event::SessionStart { .. } => "start",
                    Event::ToolCall { .. } => "call",
                    Event::ToolResult { .. } => "result",
                    Event::Assistant { .. } => "assistant",
                    Event::Result(_) => "end",
                    Event::PermissionDecision { .. } => "decision",
                    _ => "other",
                })
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        nested,
        [
            "start",
            "assistant",
            "call",
            "call",
            "decision",
            "decision",
            "result",
            "result",
            "assistant",
            "end"
        ]
    );
}

#[tokio::test]
async fn an_explore_agent_gets_only_read_only_tools_and_cannot_call_others() {
    let provider = Routed::default()
        .with(
            "main task",
            vec![
                reply("", &[task("look around", "Explore")]),
                reply("ok", &[]),
            ],
        )
        .with(
            "look around",
            vec![
                reply("", &[("Change", json!({})), task("deeper", "Explore")]),
                reply("Looked.", &[]),
            ],
        );
    let ran = run(
        &provider,
        &registry(None),
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    let sub = provider.requests_of("look around");
    assert_eq!(tool_names(&sub[0]), ["Look"]);
    assert!(sub[0].system.contains("read-only exploration"));
    // The sub-agent's calls to tools it was not given failed as unknown.
    let last = &sub[1].messages;
    let errors: Vec<String> = last
        .last()
        .unwrap()
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult {
                content,
                is_error: true,
                ..
            } => match &content[0] {
                Block::Text { text } => Some(text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().all(|e| e.contains("There is no tool named")));
    assert!(provider.requests_of("deeper").is_empty());
    assert_eq!(
        tool_results(&ran.state)[0].0,
        "Looked. [complete, 2 cycles, 2 tools, $2]"
    );
}

#[tokio::test]
async fn an_unknown_type_is_an_error_naming_the_known_ones() {
    let provider = Routed::default().with(
        "main task",
        vec![reply("", &[task("x", "wizard")]), reply("ok", &[])],
    );
    let ran = run(
        &provider,
        &registry(None),
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    let (text, is_error) = &tool_results(&ran.state)[0];
    assert!(is_error);
    assert!(
        text.contains("no sub-agent type `wizard`; use one of: general-purpose, Explore"),
        "{text}"
    );
    assert!(provider.requests_of("x").is_empty());
}

#[tokio::test]
async fn sub_agents_called_together_run_at_the_same_time() {
    // Each sub-agent's Look waits until both have reached it.
    let barrier = Arc::new(Barrier::new(2));
    let provider = Routed::default()
        .with(
            "main task",
            vec![
                reply(
                    "",
                    &[task("first", "Explore"), task("second", "general-purpose")],
                ),
                reply("ok", &[]),
            ],
        )
        .with(
            "first",
            vec![reply("", &[("Look", json!({}))]), reply("one", &[])],
        )
        .with(
            "second",
            vec![reply("", &[("Look", json!({}))]), reply("two", &[])],
        );
    let tools = registry(Some(barrier));
    let ran = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &provider,
            &tools,
            |c| c.budget_usd = 100.0,
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("the two sub-agents should meet at the barrier");
    let results: Vec<String> = tool_results(&ran.state)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    assert!(results[0].starts_with("one ["), "{results:?}");
    assert!(results[1].starts_with("two ["), "{results:?}");
    assert_eq!(ran.result.cost_usd, 6.0, "{results:?} {:?}", ran.result);
}

#[tokio::test]
async fn sub_agents_spend_from_the_parents_budget() {
    let looping: Vec<Response> = (0..10)
        .map(|_| reply("still going", &[("Look", json!({}))]))
        .collect();
    let provider = Routed::default()
        .with(
            "main task",
            vec![
                reply("", &[task("spend", "general-purpose")]),
                reply("x", &[]),
            ],
        )
        .with("spend", looping);
    // The parent's first call costs $1; the sub-agent may spend $2 more.
    let ran = run(
        &provider,
        &registry(None),
        |c| c.budget_usd = 3.0,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(provider.requests_of("spend").len(), 2);
    let (text, _) = &tool_results(&ran.state)[0];
    assert!(text.contains("[budget_exceeded, 2 cycles"), "{text}");
    assert_eq!(ran.result.status, Status::BudgetExceeded);
    assert_eq!(
        ran.result.cycles_used, 1,
        "the parent stops before thinking again"
    );
    assert_eq!(ran.result.cost_usd, 3.0);
}

#[tokio::test]
async fn an_interrupt_stops_a_running_sub_agent_and_its_parent() {
    let provider = Routed {
        hang_on: Some("wait forever".into()),
        ..Routed::default()
    }
    .with(
        "main task",
        vec![reply("", &[task("wait forever", "general-purpose")])],
    );
    let interrupt = CancellationToken::new();
    let (stop, hanging) = (interrupt.clone(), provider.hanging.clone());
    // Once the sub-agent waits on the model: it is running.
    tokio::spawn(async move {
        hanging.notified().await;
        stop.cancel();
    });
    let ran = run(&provider, &registry(None), |_| {}, &interrupt).await;
    assert_eq!(ran.result.status, Status::Interrupted);
    assert_eq!(provider.requests_of("wait forever").len(), 1);
}

#[tokio::test]
async fn the_parents_time_limit_bounds_its_sub_agents() {
    let provider = Routed {
        hang_on: Some("slow".into()),
        ..Routed::default()
    }
    .with("main task", vec![reply("", &[task("slow", "Explore")])]);
    let ran = run(
        &provider,
        &registry(None),
        |c| c.timeout = Some(Duration::from_millis(200)),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        ran.result.status,
        Status::Timeout,
        "{:?}",
        tool_results(&ran.state)
    );
}
