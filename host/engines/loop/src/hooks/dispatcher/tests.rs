use super::*;
use kaizen_hooks::{HookFuture, Matcher, Subscription};
use serde_json::json;
use std::sync::Mutex;

/// How a scripted hook answers a payload.
type Answer = Box<dyn Fn(&Value) -> Result<HookDecision, String> + Send + Sync>;

/// A hook that records what it saw and answers from a script.
struct Scripted {
    name: String,
    subs: Vec<Subscription>,
    required: bool,
    timeout: Option<Duration>,
    answer: Answer,
    delay: Option<Duration>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Hook for Scripted {
    fn name(&self) -> &str {
        &self.name
    }
    fn subscriptions(&self) -> &[Subscription] {
        &self.subs
    }
    fn required(&self) -> bool {
        self.required
    }
    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
    fn handle<'a>(&'a self, _event: HookEvent, payload: &'a Value) -> HookFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(self.name.clone());
            if let Some(delay) = self.delay {
                tokio::time::sleep(delay).await;
            }
            (self.answer)(payload)
        })
    }
}

fn hook(
    name: &str,
    priority: Priority,
    seen: &Arc<Mutex<Vec<String>>>,
    answer: impl Fn(&Value) -> Result<HookDecision, String> + Send + Sync + 'static,
) -> Scripted {
    Scripted {
        name: name.into(),
        subs: vec![Subscription {
            event: HookEvent::PreToolUse,
            matcher: Matcher::Any,
            priority,
        }],
        required: false,
        timeout: None,
        answer: Box::new(answer),
        delay: None,
        seen: seen.clone(),
    }
}

fn dispatcher(hooks: Vec<Scripted>) -> HookDispatcher {
    HookDispatcher::new(
        hooks
            .into_iter()
            .map(|hook| Arc::new(hook) as Arc<dyn Hook>)
            .collect(),
    )
}

fn payload() -> Value {
    json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})
}

/// Dispatches `PreToolUse` of `tool` with [`payload`], as the loop does
/// before a call.
async fn pre_tool_use(hooks: &HookDispatcher, tool: &str) -> Dispatch {
    hooks
        .dispatch(
            HookEvent::PreToolUse,
            Some(tool),
            payload(),
            &HookCall::default(),
        )
        .await
}

/// A hook that answers every payload with `action`.
fn answering(
    name: &str,
    priority: Priority,
    seen: &Arc<Mutex<Vec<String>>>,
    action: HookAction,
) -> Scripted {
    hook(name, priority, seen, move |_| {
        Ok(HookDecision::action(action.clone()))
    })
}

/// A hook that denies, but only after 30 s: for the timeouts.
fn slow_denier(seen: &Arc<Mutex<Vec<String>>>) -> Scripted {
    let mut slow = answering(
        "slow",
        Priority::NORMAL,
        seen,
        HookAction::Deny("late".into()),
    );
    slow.delay = Some(Duration::from_secs(30));
    slow
}

#[tokio::test]
async fn hooks_run_by_priority_then_load_order() {
    let seen = Arc::default();
    let ok = |_: &Value| Ok(HookDecision::default());
    let hooks = dispatcher(vec![
        hook("low", Priority::LOW, &seen, ok),
        hook("normal-1", Priority::NORMAL, &seen, ok),
        hook("critical", Priority::CRITICAL, &seen, ok),
        hook("normal-2", Priority::NORMAL, &seen, ok),
    ]);
    pre_tool_use(&hooks, "Bash").await;
    assert_eq!(
        *seen.lock().unwrap(),
        ["critical", "normal-1", "normal-2", "low"]
    );
}

#[tokio::test]
async fn decisions_merge_deny_over_ask_over_allow() {
    let seen = Arc::default();
    let hooks = dispatcher(vec![
        answering("allows", Priority::HIGH, &seen, HookAction::Allow),
        answering(
            "asks",
            Priority::NORMAL,
            &seen,
            HookAction::Ask("check".into()),
        ),
        answering(
            "denies",
            Priority::LOW,
            &seen,
            HookAction::Deny("no rm".into()),
        ),
    ]);
    let out = pre_tool_use(&hooks, "Bash").await;
    assert_eq!(out.action, HookAction::Deny("no rm".into()));
    assert_eq!(out.decided_by.as_deref(), Some("denies"));
    assert_eq!(out.reports.len(), 3);
}

#[tokio::test]
async fn later_hooks_see_the_updated_input() {
    let seen = Arc::default();
    let hooks = dispatcher(vec![
        hook("rewrites", Priority::HIGH, &seen, |_| {
            Ok(HookDecision {
                updated_input: Some(json!({"command": "ls -la"})),
                added_context: Some("first".into()),
                ..HookDecision::default()
            })
        }),
        hook("checks", Priority::NORMAL, &seen, |payload| {
            assert_eq!(payload["tool_input"]["command"], "ls -la");
            Ok(HookDecision {
                added_context: Some("second".into()),
                ..HookDecision::default()
            })
        }),
    ]);
    let out = pre_tool_use(&hooks, "Bash").await;
    assert_eq!(out.updated_input, Some(json!({"command": "ls -la"})));
    assert_eq!(out.context().as_deref(), Some("first\nsecond"));
    assert_eq!(out.action, HookAction::Continue);
}

#[tokio::test]
async fn a_failing_hook_is_skipped_unless_required() {
    let seen = Arc::default();
    let mut required = hook("guard", Priority::NORMAL, &seen, |_| Err("crashed".into()));
    required.required = true;
    let hooks = dispatcher(vec![
        hook("flaky", Priority::HIGH, &seen, |_| Err("trap".into())),
        answering("allows", Priority::NORMAL, &seen, HookAction::Allow),
    ]);
    let out = pre_tool_use(&hooks, "Bash").await;
    assert_eq!(out.action, HookAction::Allow, "the failure is skipped");
    assert_eq!(out.reports[0].outcome, "failed");
    assert_eq!(out.reports[0].reason.as_deref(), Some("trap"));

    let hooks = dispatcher(vec![required]);
    let out = pre_tool_use(&hooks, "Bash").await;
    let HookAction::Deny(reason) = &out.action else {
        panic!("a required hook fails closed: {out:?}");
    };
    assert!(
        reason.contains("required hook guard") && reason.contains("crashed"),
        "{reason}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_hook_gives_no_decision_after_its_timeout() {
    let seen = Arc::default();
    let mut slow = slow_denier(&seen);
    slow.timeout = Some(Duration::from_secs(2));
    let out = pre_tool_use(&dispatcher(vec![slow]), "Bash").await;
    assert_eq!(out.action, HookAction::Continue);
    assert!(out.reports[0].reason.as_deref().unwrap().contains("2 s"));

    // The dispatcher's default applies to a hook without a timeout.
    let mut slow = slow_denier(&seen);
    slow.required = true;
    let hooks = dispatcher(vec![slow]).with_default_timeout(Duration::from_secs(5));
    let out = pre_tool_use(&hooks, "Bash").await;
    assert!(
        matches!(out.action, HookAction::Deny(ref why) if why.contains("5 s")),
        "{out:?}"
    );
}

#[tokio::test]
async fn matchers_and_events_select_hooks() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut edits = answering("edits", Priority::NORMAL, &seen, HookAction::Continue);
    edits.subs[0].matcher = Matcher::parse("Edit|Write").unwrap();
    let mut stops = answering("stops", Priority::NORMAL, &seen, HookAction::Continue);
    stops.subs[0].event = HookEvent::Stop;
    let hooks = dispatcher(vec![edits, stops]);
    assert!(hooks.wants(HookEvent::Stop) && !hooks.wants(HookEvent::SessionEnd));
    pre_tool_use(&hooks, "Bash").await;
    assert!(seen.lock().unwrap().is_empty());
    pre_tool_use(&hooks, "Write").await;
    hooks
        .dispatch(HookEvent::Stop, None, json!({}), &HookCall::default())
        .await;
    assert_eq!(*seen.lock().unwrap(), ["edits", "stops"]);
}
