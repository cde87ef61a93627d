//! The loop's steps through a `StepExecutor`: an executor that journals
//! each step's result by its key, as a durable-execution engine does, lets
//! a session's run start over from nothing (its worker was lost) and arrive
//! where it was, without running a finished step twice.

mod common;

use kaizen_llm::{
    CompletionFuture, CompletionsFuture, EventSink, LlmError, LlmErrorKind, Provider, Request,
    Response, Usage,
};
use kaizen_loop::{Agent, AgentConfig, SessionState, StepExecutor, ToolStep, ToolStepped};
use kaizen_protocol::{CancellationToken, Silent, Status, StepKey};
use kaizen_tools::{
    CallContext, Danger, Tool, ToolError, ToolErrorKind, ToolFuture, ToolOutput, ToolRegistry,
    ToolSpec,
};
use serde_json::json;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Answers in order, counting calls; when the script runs out, it fails
/// (a run that reaches it has run a model call twice) or hangs.
struct Scripted {
    replies: Mutex<Vec<Response>>,
    calls: AtomicUsize,
    hang_when_done: bool,
}

impl Scripted {
    fn new(mut replies: Vec<Response>, hang_when_done: bool) -> Self {
        replies.reverse();
        Self {
            replies: Mutex::new(replies),
            calls: AtomicUsize::new(0),
            hang_when_done,
        }
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(&'a self, _: &'a Request, _: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let next = self.replies.lock().unwrap().pop();
            match (next, self.hang_when_done) {
                (Some(reply), _) => Ok(reply),
                (None, true) => std::future::pending().await,
                (None, false) => Err(LlmError {
                    kind: LlmErrorKind::Replay,
                    message: "the script ran out".into(),
                }),
            }
        })
    }
}

/// A tool with an effect: it counts its runs.
struct Bump(ToolSpec, Arc<AtomicUsize>);

impl Tool for Bump {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, _: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let n = self.1.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(ToolOutput::text(format!(
                "bumped {} (run {n})",
                input["what"]
            )))
        })
    }
}

/// Journals each step's result by its key and hands it back when the
/// step comes again, as a durable-execution engine does; a failed step is
/// not journaled (it runs again).
#[derive(Debug, Default)]
struct Journaling {
    models: Mutex<HashMap<String, Vec<Response>>>,
    tools: Mutex<HashMap<String, ToolStepped>>,
    /// Every key asked for, in order.
    asked: Mutex<Vec<String>>,
}

impl StepExecutor for Journaling {
    fn model<'a>(&'a self, key: StepKey, call: CompletionsFuture<'a>) -> CompletionsFuture<'a> {
        let name = key.to_string();
        self.asked.lock().unwrap().push(name.clone());
        Box::pin(async move {
            if let Some(kept) = self.models.lock().unwrap().get(&name) {
                return kept.iter().cloned().map(Ok).collect();
            }
            let answers = call.await;
            if answers.iter().all(Result::is_ok) {
                let kept = answers.iter().flatten().cloned().collect();
                self.models.lock().unwrap().insert(name, kept);
            }
            answers
        })
    }

    fn tool<'a>(&'a self, key: StepKey, call: ToolStep<'a>) -> ToolStep<'a> {
        let name = key.to_string();
        self.asked.lock().unwrap().push(name.clone());
        Box::pin(async move {
            if let Some(kept) = self.tools.lock().unwrap().get(&name) {
                return kept.clone();
            }
            let stepped = call.await;
            self.tools.lock().unwrap().insert(name, stepped.clone());
            stepped
        })
    }
}

fn registry(runs: &Arc<AtomicUsize>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(Bump(
            ToolSpec {
                name: "Bump".into(),
                description: "bumps".into(),
                input_schema: json!({"type": "object"}),
                danger: Danger::Safe,
                read_only: false,
            },
            runs.clone(),
        )))
        .unwrap();
    registry
}

/// The session's script: two tool steps, then the answer.
fn script() -> Vec<Response> {
    vec![
        common::reply_json("first", &[("Bump", json!({"what": "a"}))]),
        common::reply_json("second", &[("Bump", json!({"what": "b"}))]),
        common::reply_json("done", &[]),
    ]
}

/// One run of the session `s` from nothing, through `steps`.
async fn run(
    provider: &Scripted,
    steps: &Arc<Journaling>,
    runs: &Arc<AtomicUsize>,
    interrupt: &CancellationToken,
) -> kaizen_protocol::RunResult {
    run_in(provider, steps, runs, interrupt, None).await
}

/// [`run`], with the model's window set to `window` when given.
async fn run_in(
    provider: &Scripted,
    steps: &Arc<Journaling>,
    runs: &Arc<AtomicUsize>,
    interrupt: &CancellationToken,
    window: Option<u64>,
) -> kaizen_protocol::RunResult {
    let pricing = |_: &str, _: &Usage| 0.25;
    let tools = registry(runs);
    let mut config = AgentConfig::new("m", std::env::temp_dir());
    config.steps = steps.clone();
    if let Some(window) = window {
        config.context.window = window;
    }
    let agent = Agent {
        provider,
        tools: &tools,
        pricing: &pricing,
        config,
        observer: &Silent,
        journal: None,
        guard: Arc::new(kaizen_loop::Guard::allow_all()),
    };
    let mut state = SessionState::new("s", "m");
    agent
        .resume(&mut state, Some("bump twice"), interrupt)
        .await
}

#[tokio::test]
async fn a_session_run_again_hands_back_its_finished_steps_and_ends_the_same() {
    let steps = Arc::new(Journaling::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let first_provider = Scripted::new(script(), false);
    let first = run(&first_provider, &steps, &runs, &CancellationToken::new()).await;
    assert_eq!(first.status, Status::Complete, "{first:?}");
    assert_eq!(first.output, "done");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let asked = steps.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [
            "s/1/model/1",
            "s/1/tool/call_0_Bump",
            "s/2/model/1",
            "s/2/tool/call_0_Bump",
            "s/3/model/1"
        ]
    );

    // The same session from nothing: every step comes from the journal.
    let again_provider = Scripted::new(Vec::new(), false);
    let again = run(&again_provider, &steps, &runs, &CancellationToken::new()).await;
    assert_eq!(again_provider.calls.load(Ordering::SeqCst), 0);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "a tool step ran twice");
    assert_eq!(again.status, first.status);
    assert_eq!(again.output, first.output);
    assert_eq!(again.cycles_used, first.cycles_used);
    assert_eq!(again.tokens_used, first.tokens_used);
    assert_eq!(again.cost_usd, first.cost_usd);
    let names = |r: &kaizen_protocol::RunResult| {
        r.tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.status.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&again), names(&first));
}

#[tokio::test]
async fn a_run_lost_mid_session_goes_on_from_its_journal() {
    let steps = Arc::new(Journaling::default());
    let runs = Arc::new(AtomicUsize::new(0));
    // The worker is lost while the second model call is out: the first
    // model call and the first tool step are journaled.
    let lost_provider = Scripted::new(script()[..1].to_vec(), true);
    let lost = CancellationToken::new();
    let stop = lost.clone();
    let watched = runs.clone();
    tokio::spawn(async move {
        while watched.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        stop.cancel();
    });
    let cut = run(&lost_provider, &steps, &runs, &lost).await;
    assert_eq!(cut.status, Status::Interrupted, "{cut:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Another worker runs the session from nothing: the finished steps
    // come from the journal, the rest from the model and the tool.
    let rest = Scripted::new(script()[1..].to_vec(), false);
    let done = run(&rest, &steps, &runs, &CancellationToken::new()).await;
    assert_eq!(done.status, Status::Complete, "{done:?}");
    assert_eq!(done.output, "done");
    assert_eq!(rest.calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "the first tool step ran twice"
    );
    assert_eq!(done.cycles_used, 3);
    assert_eq!(done.tool_calls.len(), 2);
}

#[tokio::test]
async fn a_compaction_summary_is_a_step_of_its_own() {
    let steps = Arc::new(Journaling::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let mut replies = script();
    // The summary is asked for before the third model call.
    replies.insert(2, common::reply_json("the summary", &[]));
    let provider = Scripted::new(replies, false);
    // Each scripted answer reports 110 tokens: the conversation passes
    // 80 % of this window once there is a turn to summarise.
    let window = Some(130);
    let interrupt = CancellationToken::new();
    let first = run_in(&provider, &steps, &runs, &interrupt, window).await;
    assert_eq!(first.status, Status::Complete, "{first:?}");
    let asked = steps.asked.lock().unwrap().clone();
    assert!(
        asked.contains(&"s/3/model/compaction".to_string()),
        "{asked:?}"
    );
    assert_eq!(first.compactions, 1);
    let none = Scripted::new(Vec::new(), false);
    let again = run_in(&none, &steps, &runs, &interrupt, window).await;
    assert_eq!(none.calls.load(Ordering::SeqCst), 0);
    assert_eq!(again.output, first.output);
    assert_eq!(again.compactions, 1);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// Asks the model through the call's links, as a plugin does: one
/// completion of its own, then a sub-agent.
struct Delegate(ToolSpec);

impl Tool for Delegate {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, ctx: &'a CallContext, _: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let request = kaizen_tools::CompletionRequest {
                model_role: None,
                system: None,
                messages: vec![kaizen_tools::PromptMessage {
                    assistant: false,
                    content: "summarise".into(),
                }],
                max_tokens: None,
                temperature: None,
            };
            let completion = ctx
                .completions
                .complete("delegate", &ctx.call_id, request)
                .await
                .map_err(|err| ToolError::new(ToolErrorKind::Failed, err.to_string()))?;
            let report = ctx
                .sub_agents
                .run(
                    &ctx.call_id,
                    kaizen_tools::SubAgentRequest {
                        description: "look".into(),
                        prompt: "look around".into(),
                        subagent_type: "Explore".into(),
                    },
                )
                .await
                .map_err(|err| ToolError::new(ToolErrorKind::Failed, err))?;
            Ok(ToolOutput::text(format!(
                "{} / {}",
                completion.text, report.output
            )))
        })
    }
}

#[tokio::test]
async fn what_a_tool_step_spent_on_models_is_charged_again_when_the_journal_hands_it_back() {
    let steps = Arc::new(Journaling::default());
    let mut tools = ToolRegistry::new();
    tools
        .register(Arc::new(Delegate(ToolSpec {
            name: "Delegate".into(),
            description: "asks the model".into(),
            input_schema: json!({"type": "object"}),
            danger: Danger::Safe,
            read_only: false,
        })))
        .unwrap();
    let pricing = |_: &str, _: &Usage| 0.25;
    let run = |provider: Scripted| {
        let steps = steps.clone();
        let tools = &tools;
        async move {
            let mut config = AgentConfig::new("m", std::env::temp_dir());
            config.steps = steps;
            let agent = Agent {
                provider: &provider,
                tools,
                pricing: &pricing,
                config,
                observer: &Silent,
                journal: None,
                guard: Arc::new(kaizen_loop::Guard::allow_all()),
            };
            let mut state = SessionState::new("s", "m");
            let result = agent
                .resume(&mut state, Some("delegate"), &CancellationToken::new())
                .await;
            (result, provider.calls.load(Ordering::SeqCst))
        }
    };
    // The parent's call, the tool's completion, the sub-agent's one call,
    // the parent's answer.
    let first = Scripted::new(
        vec![
            common::reply_json("", &[("Delegate", json!({}))]),
            common::reply_json("a summary", &[]),
            common::reply_json("nothing here", &[]),
            common::reply_json("done", &[]),
        ],
        false,
    );
    let (first, calls) = run(first).await;
    assert_eq!(first.status, Status::Complete, "{first:?}");
    assert_eq!(calls, 4);
    assert_eq!(first.cost_usd, 1.0, "{first:?}");

    // Run again from nothing: the tool step comes back from the journal,
    // and what its completion and sub-agent spent is charged as it was.
    let (again, calls) = run(Scripted::new(Vec::new(), false)).await;
    assert_eq!(calls, 0);
    assert_eq!(again.status, Status::Complete, "{again:?}");
    assert_eq!(again.cost_usd, first.cost_usd);
    assert_eq!(again.tokens_used, first.tokens_used);
}
