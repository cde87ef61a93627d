//! The guard in the loop: permission modes and rules, hooks at every
//! event, the user's approval, and sub-agents' calls passing the same
//! guard. Hooks here are in-process ([`kaizen_hooks::Hook`] is all the loop
//! sees); component and command hooks are tested through the real binary.

mod common;

use common::{Recorder, Routed, TaskTool, reply_json as reply};

use kaizen_hooks::{
    Hook, HookAction, HookDecision, HookEvent, HookFuture, Matcher, Priority, Subscription,
};
use kaizen_llm::{Block, Request, Usage};
use kaizen_loop::{Agent, AgentConfig, Guard, HookDispatcher, SessionState};
use kaizen_permissions::{Effect, Permissions, Rule, RuleOrigin, RuleSet};
use kaizen_protocol::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Event, PermissionMode,
    RunResult, Status,
};
use kaizen_tools::{
    CallContext, Danger, RuleSubject, SubjectKind, Tool, ToolFuture, ToolOutput, ToolRegistry,
    ToolSpec,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const TASK: &str = "do the task";

/// A tool that says what it was called with.
struct Echo {
    spec: ToolSpec,
    subject: Option<RuleSubject>,
    contained: bool,
}

impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn source(&self) -> &str {
        "test"
    }
    fn rule_subject(&self) -> Option<&RuleSubject> {
        self.subject.as_ref()
    }
    fn contained(&self) -> bool {
        self.contained
    }
    fn call<'a>(&'a self, _: &'a CallContext, input: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move { Ok(ToolOutput::text(format!("{} ran {input}", self.spec.name))) })
    }
}

fn echo(
    name: &str,
    read_only: bool,
    danger: Danger,
    subject: Option<(SubjectKind, &str)>,
    contained: bool,
) -> Arc<dyn Tool> {
    let field = subject.map(|(_, field)| field.to_string());
    let mut properties = serde_json::Map::new();
    if let Some(field) = &field {
        properties.insert(field.clone(), json!({"type": "string"}));
    }
    Arc::new(Echo {
        spec: ToolSpec {
            name: name.into(),
            description: format!("{name} things"),
            input_schema: json!({"type": "object", "properties": properties, "additionalProperties": false}),
            danger,
            read_only,
        },
        subject: subject.map(|(kind, field)| RuleSubject {
            kind,
            field: field.into(),
        }),
        contained,
    })
}

/// Look (read-only), Shell (runs commands, not contained), Box (runs
/// commands, contained), Write (edits files, not contained), Task.
fn tools() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let all = [
        echo("Look", true, Danger::Safe, None, false),
        echo(
            "Shell",
            false,
            Danger::High,
            Some((SubjectKind::Command, "command")),
            false,
        ),
        echo(
            "Box",
            false,
            Danger::High,
            Some((SubjectKind::Command, "command")),
            true,
        ),
        echo(
            "Write",
            false,
            Danger::Medium,
            Some((SubjectKind::EditPath, "file_path")),
            false,
        ),
    ];
    for tool in all {
        registry.register(tool).unwrap();
    }
    let task = ToolSpec {
        name: "Task".into(),
        description: "delegate".into(),
        input_schema: json!({"type": "object"}),
        danger: Danger::Medium,
        read_only: true,
    };
    registry.register(Arc::new(TaskTool(task))).unwrap();
    registry
}

/// How a test hook answers.
type Answer = Box<dyn Fn(HookEvent, &Value) -> Result<HookDecision, String> + Send + Sync>;

/// An in-process hook that keeps every payload it sees.
struct TestHook {
    name: String,
    subscriptions: Vec<Subscription>,
    required: bool,
    answer: Answer,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Hook for TestHook {
    fn name(&self) -> &str {
        &self.name
    }
    fn subscriptions(&self) -> &[Subscription] {
        &self.subscriptions
    }
    fn required(&self) -> bool {
        self.required
    }
    fn handle<'a>(&'a self, event: HookEvent, payload: &'a Value) -> HookFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(payload.clone());
            (self.answer)(event, payload)
        })
    }
}

fn hook(
    name: &str,
    events: &[HookEvent],
    matcher: &str,
    answer: impl Fn(HookEvent, &Value) -> Result<HookDecision, String> + Send + Sync + 'static,
) -> (Arc<dyn Hook>, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let subscriptions = events
        .iter()
        .map(|&event| Subscription {
            event,
            matcher: Matcher::parse(matcher).unwrap(),
            priority: Priority::NORMAL,
        })
        .collect();
    let hook = TestHook {
        name: name.into(),
        subscriptions,
        required: false,
        answer: Box::new(answer),
        seen: seen.clone(),
    };
    (Arc::new(hook), seen)
}

fn decision(action: HookAction) -> Result<HookDecision, String> {
    Ok(HookDecision::action(action))
}

/// Answers from a list, counting questions.
struct Answers(Mutex<Vec<Approval>>, Mutex<Vec<ApprovalRequest>>);

impl Answers {
    fn new(answers: Vec<Approval>) -> Arc<Self> {
        Arc::new(Self(Mutex::new(answers), Mutex::default()))
    }
    fn asked(&self) -> Vec<ApprovalRequest> {
        self.1.lock().unwrap().clone()
    }
}

impl Approver for Answers {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            self.1.lock().unwrap().push(request.clone());
            let mut answers = self.0.lock().unwrap();
            if answers.is_empty() {
                Approval::Deny("no more answers".into())
            } else {
                answers.remove(0)
            }
        })
    }
}

fn rules(list: &[(Effect, &str)]) -> RuleSet {
    let mut set = RuleSet::new();
    for (effect, text) in list {
        let origin = RuleOrigin {
            label: "test settings".into(),
            base: std::env::temp_dir(),
        };
        set.push(Rule::parse(*effect, text, origin, std::path::Path::new("/home/u")).unwrap());
    }
    set
}

struct Setup {
    mode: PermissionMode,
    rules: RuleSet,
    hooks: Vec<Arc<dyn Hook>>,
    approver: Option<Arc<dyn Approver>>,
    max_stops: Option<u32>,
}

impl Setup {
    fn mode(mode: PermissionMode) -> Self {
        Self {
            mode,
            rules: RuleSet::new(),
            hooks: Vec::new(),
            approver: None,
            max_stops: None,
        }
    }
}

struct Ran {
    result: RunResult,
    events: Vec<Event>,
    requests: Vec<Request>,
}

impl Ran {
    /// The text of the tool result for call `id` the model was sent.
    fn result_of(&self, id: &str) -> String {
        self.requests
            .iter()
            .flat_map(|r| r.messages.iter())
            .flat_map(|m| m.content.iter())
            .find_map(|b| match b {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if tool_use_id == id => Some(
                    content
                        .iter()
                        .filter_map(|c| match c {
                            Block::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no result for {id}"))
    }

    /// The names of the tools the first request offered.
    fn offered(&self) -> Vec<&str> {
        self.requests[0]
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect()
    }

    fn statuses(&self) -> Vec<(String, String)> {
        self.result
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.status.clone()))
            .collect()
    }
}

async fn run(setup: Setup, provider: Routed) -> Ran {
    run_until(setup, provider, &CancellationToken::new()).await
}

async fn run_until(setup: Setup, provider: Routed, interrupt: &CancellationToken) -> Ran {
    let tools = tools();
    let permissions = Permissions::new(setup.mode, setup.rules, "/home/u");
    let mut guard = Guard::new(
        permissions,
        HookDispatcher::new(setup.hooks),
        setup.approver,
    );
    if let Some(max) = setup.max_stops {
        guard.max_stop_continuations = max;
    }
    let pricing = |_: &str, _: &Usage| 0.0;
    let observer = Recorder::default();
    let agent = Agent {
        provider: &provider,
        tools: &tools,
        pricing: &pricing,
        config: AgentConfig::new("scripted-model", std::env::temp_dir()),
        observer: &observer,
        journal: None,
        guard: Arc::new(guard),
    };
    let mut state = SessionState::new("s-guard", "scripted-model");
    let result = agent.run(&mut state, TASK, interrupt).await;
    Ran {
        result,
        events: observer.0.into_inner().unwrap(),
        requests: provider.requests.into_inner().unwrap(),
    }
}

fn script(replies: Vec<kaizen_llm::Response>) -> Routed {
    Routed::default().with(TASK, replies)
}

#[tokio::test]
async fn default_mode_runs_read_only_and_contained_tools_and_asks_for_the_rest() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Look", json!({})),
                ("Box", json!({"command": "make"})),
                ("Shell", json!({"command": "curl x"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let ran = run(Setup::mode(PermissionMode::Default), provider).await;
    assert_eq!(ran.result.status, Status::Complete);
    assert_eq!(
        ran.statuses(),
        [
            ("Look".into(), "success".into()),
            ("Box".into(), "success".into()),
            ("Shell".into(), "denied".into())
        ]
    );
    let refusal = ran.result_of("call_2_Shell");
    assert!(
        refusal.contains("nobody can be asked")
            && refusal.contains("--allowedTools 'Shell(curl x)'"),
        "{refusal}"
    );
    let denials = &ran.result.permission_denials;
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0].tool_name, "Shell");
    assert_eq!(denials[0].tool_input, json!({"command": "curl x"}));
    assert!(ran.events.iter().any(|e| matches!(e,
        Event::PermissionDecision { name, decision, by, .. }
            if name == "Shell" && decision == "deny" && by == "mode")));
}

#[tokio::test]
async fn each_mode_treats_calls_as_its_name_says() {
    let calls = || {
        script(vec![
            reply(
                "",
                &[
                    ("Look", json!({})),
                    ("Write", json!({"file_path": "/tmp/x"})),
                    ("Shell", json!({"command": "ls"})),
                ],
            ),
            reply("done", &[]),
        ])
    };
    let expect = [
        (PermissionMode::Plan, ["success", "denied", "denied"]),
        (
            PermissionMode::AcceptEdits,
            ["success", "success", "denied"],
        ),
        (
            PermissionMode::BypassPermissions,
            ["success", "success", "success"],
        ),
        (PermissionMode::DontAsk, ["success", "denied", "denied"]),
        (PermissionMode::Default, ["success", "denied", "denied"]),
    ];
    for (mode, statuses) in expect {
        let ran = run(Setup::mode(mode), calls()).await;
        let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
        assert_eq!(got, statuses, "{mode}");
        if mode == PermissionMode::Plan {
            assert!(ran.result_of("call_1_Write").contains("plan mode"));
        }
    }
}

#[tokio::test]
async fn deny_beats_ask_beats_allow_and_a_denied_whole_tool_is_not_offered() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Shell", json!({"command": "git status && rm -rf ~"})),
                ("Shell", json!({"command": "git status"})),
                ("Shell", json!({"command": "git push"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.rules = rules(&[
        (Effect::Allow, "Shell(git:*)"),
        (Effect::Allow, "Shell(rm:*)"),
        (Effect::Deny, "Shell(rm -rf:*)"),
        (Effect::Ask, "Shell(git push:*)"),
        (Effect::Deny, "Write"),
    ]);
    setup.approver = Some(Answers::new(vec![Approval::Deny("not today".into())]));
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["denied", "success", "denied"]);
    assert!(ran.result_of("call_0_Shell").contains("`Shell(rm -rf:*)`"));
    assert!(ran.result_of("call_2_Shell").contains("not today"));
    let offered = ran.offered();
    assert!(
        !offered.contains(&"Write") && offered.contains(&"Shell"),
        "{offered:?}"
    );
}

#[tokio::test]
async fn the_user_approves_once_or_always_or_refuses() {
    let provider = script(vec![
        reply("", &[("Shell", json!({"command": "make test"}))]),
        reply("", &[("Shell", json!({"command": "make test"}))]),
        reply("", &[("Shell", json!({"command": "make test"}))]),
        reply("", &[("Shell", json!({"command": "make lint"}))]),
        reply("done", &[]),
    ]);
    let answers = Answers::new(vec![
        Approval::Once,
        Approval::Always,
        Approval::Deny(String::new()),
    ]);
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.approver = Some(answers.clone());
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["success", "success", "success", "denied"]);
    let asked = answers.asked();
    assert_eq!(asked.len(), 3, "the third call ran under the kept rule");
    assert_eq!(asked[1].always_rule, "Shell(make test)");
    assert_eq!(asked[2].input, json!({"command": "make lint"}));
    let requests = ran
        .events
        .iter()
        .filter(|e| matches!(e, Event::PermissionRequest { .. }))
        .count();
    assert_eq!(requests, 3);
}

/// `danger:` rules name tools by level: an ask on `>=high` asks for a
/// contained high tool the mode would run, a deny on `medium` refuses (and
/// hides) the edit tool even in acceptEdits, and the approval request
/// carries the level for the prompt.
#[tokio::test]
async fn danger_rules_decide_by_level_and_the_prompt_is_told_the_level() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Look", json!({})),
                ("Box", json!({"command": "make"})),
                ("Write", json!({"file_path": "/tmp/x"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let answers = Answers::new(vec![Approval::Once]);
    let mut setup = Setup::mode(PermissionMode::AcceptEdits);
    setup.rules = rules(&[
        (Effect::Ask, "danger:>=high"),
        (Effect::Deny, "danger:medium"),
    ]);
    setup.approver = Some(answers.clone());
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["success", "success", "denied"]);
    let asked = answers.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].tool.as_str(), asked[0].danger),
        ("Box", Some(Danger::High))
    );
    assert!(
        asked[0].reason.contains("`danger:>=high`"),
        "{}",
        asked[0].reason
    );
    assert!(ran.result_of("call_2_Write").contains("`danger:medium`"));
    let offered = ran.offered();
    // Task is medium too: the deny takes both out of what is offered.
    assert!(
        !offered.contains(&"Write") && !offered.contains(&"Task") && offered.contains(&"Box"),
        "{offered:?}"
    );
}

/// "Allow always" keeps the command as it is: a `*` in it is the
/// character, so the kept rule does not stretch to other commands.
#[tokio::test]
async fn an_always_rule_keeps_a_star_as_a_star() {
    let provider = script(vec![
        reply("", &[("Shell", json!({"command": "make *"}))]),
        reply("", &[("Shell", json!({"command": "make deploy"}))]),
        reply("done", &[]),
    ]);
    let answers = Answers::new(vec![Approval::Always, Approval::Deny(String::new())]);
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.approver = Some(answers.clone());
    let ran = run(setup, provider).await;
    let asked = answers.asked();
    assert_eq!(asked[0].always_rule, "Shell(make \\*)");
    assert_eq!(asked.len(), 2, "the kept rule allowed `make deploy`");
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["success", "denied"]);
}

/// An approver that edits the input runs the edit, judged as a hook's
/// rewrite is: a deny rule holds against it, and an edit the tool's
/// schema refuses does not run.
#[tokio::test]
async fn the_approvers_edit_runs_and_is_judged_as_the_models_input() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Shell", json!({"command": "make test"})),
                ("Shell", json!({"command": "make lint"})),
                ("Shell", json!({"command": "make docs"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let answers = Answers::new(vec![
        Approval::Edited(json!({"command": "make test-fast"})),
        Approval::Edited(json!({"command": "rm -rf build"})),
        Approval::Edited(json!({"command": "make", "extra": true})),
    ]);
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.approver = Some(answers.clone());
    setup.rules = rules(&[(Effect::Deny, "Shell(rm:*)")]);
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["success", "denied", "error"]);
    assert!(ran.result_of("call_0_Shell").contains("make test-fast"));
    assert!(ran.result_of("call_1_Shell").contains("Shell(rm:*)"));
    let refused = ran.result_of("call_2_Shell");
    assert!(
        refused.contains("The approver edited the input of Shell"),
        "{refused}"
    );
    assert_eq!(answers.asked()[0].call_id, "call_0_Shell");
}

/// A hook's rewrite of a call is judged by the rules as the model's input
/// was: a deny rule holds against what the hook makes of it.
#[tokio::test]
async fn a_hooks_rewrite_is_checked_against_the_rules_again() {
    let provider = script(vec![
        reply("", &[("Shell", json!({"command": "echo hi"}))]),
        reply("done", &[]),
    ]);
    let (rewrite, _) = hook("rewrite", &[HookEvent::PreToolUse], "Shell", |_, _| {
        Ok(HookDecision {
            updated_input: Some(json!({"command": "rm -rf build"})),
            action: HookAction::Allow,
            ..HookDecision::default()
        })
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![rewrite];
    setup.rules = rules(&[(Effect::Deny, "Shell(rm:*)")]);
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["denied"]);
    assert!(
        ran.result_of("call_0_Shell").contains("Shell(rm:*)"),
        "{}",
        ran.result_of("call_0_Shell")
    );
}

#[tokio::test]
async fn pre_tool_use_hooks_deny_rewrite_annotate_and_allow() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Shell", json!({"command": "rm -rf build"})),
                ("Box", json!({"command": "ls"})),
                ("Box", json!({"command": "bad"})),
                ("Shell", json!({"command": "make"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let (guard, seen) = hook("guard", &[HookEvent::PreToolUse], "Shell|Box", |_, p| {
        let command = p["tool_input"]["command"].as_str().unwrap_or_default();
        match command {
            c if c.starts_with("rm") => decision(HookAction::Deny("no rm here".into())),
            "ls" => Ok(HookDecision {
                updated_input: Some(json!({"command": "ls -la"})),
                added_context: Some("listing is cheap".into()),
                ..HookDecision::default()
            }),
            "bad" => Ok(HookDecision {
                updated_input: Some(json!({"command": 7})),
                ..HookDecision::default()
            }),
            _ => decision(HookAction::Allow),
        }
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![guard];
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["denied", "success", "error", "success"]);
    assert!(ran.result_of("call_0_Shell").contains("no rm here"));
    let listed = ran.result_of("call_1_Box");
    assert!(
        listed.contains("ls -la") && listed.contains("listing is cheap"),
        "{listed}"
    );
    assert!(ran.result_of("call_2_Box").contains("schema refuses"));
    // The hook's allow lifted the mode's ask: nobody was there to ask.
    assert!(ran.result_of("call_3_Shell").contains("ran"));
    let payload = &seen.lock().unwrap()[0];
    for field in [
        "session_id",
        "transcript_path",
        "cwd",
        "permission_mode",
        "hook_event_name",
        "tool_name",
        "tool_input",
        "tool_use_id",
    ] {
        assert!(payload.get(field).is_some(), "{field} in {payload}");
    }
    assert_eq!(payload["hook_event_name"], "PreToolUse");
    assert_eq!(payload["permission_mode"], "default");
}

#[tokio::test]
async fn a_hooks_allow_does_not_lift_an_ask_rule_nor_a_deny_rule() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Shell", json!({"command": "deploy"})),
                ("Shell", json!({"command": "sudo x"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let (allow, _) = hook("allow", &[HookEvent::PreToolUse], "", |_, _| {
        decision(HookAction::Allow)
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![allow];
    setup.rules = rules(&[
        (Effect::Ask, "Shell(deploy)"),
        (Effect::Deny, "Shell(sudo:*)"),
    ]);
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["denied", "denied"]);
    assert!(
        ran.result_of("call_0_Shell")
            .contains("nobody can be asked")
    );
}

#[tokio::test]
async fn post_tool_use_hooks_replace_and_annotate_results() {
    let provider = script(vec![
        reply("", &[("Look", json!({})), ("Box", json!({"command": 3}))]),
        reply("done", &[]),
    ]);
    let (redact, seen) = hook(
        "redact",
        &[HookEvent::PostToolUse, HookEvent::PostToolUseFailure],
        "",
        |event, p| match event {
            HookEvent::PostToolUse => {
                assert!(
                    p["tool_response"]["content"]
                        .as_str()
                        .unwrap()
                        .contains("Look ran")
                );
                Ok(HookDecision {
                    updated_output: Some("[redacted]".into()),
                    action: HookAction::Deny("do not trust this".into()),
                    ..HookDecision::default()
                })
            }
            _ => Ok(HookDecision {
                added_context: Some(format!("failed: {}", p["error_kind"])),
                ..HookDecision::default()
            }),
        },
    );
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![redact];
    let ran = run(setup, provider).await;
    let look = ran.result_of("call_0_Look");
    assert!(
        look.starts_with("[redacted]") && !look.contains("Look ran"),
        "{look}"
    );
    assert!(look.contains("do not trust this"), "{look}");
    let bad = ran.result_of("call_1_Box");
    assert!(bad.contains("failed: \"schema_violation\""), "{bad}");
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn stop_hooks_send_the_model_back_until_the_cap() {
    let provider = script((0..6).map(|i| reply(&format!("answer {i}"), &[])).collect());
    let (stopper, seen) = hook("tests-first", &[HookEvent::Stop], "", |_, p| {
        if p["last_assistant_message"] == "answer 2" {
            Ok(HookDecision::default())
        } else {
            decision(HookAction::Deny("run the tests first".into()))
        }
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![stopper.clone()];
    let ran = run(setup, provider).await;
    assert_eq!(ran.result.status, Status::Complete);
    assert_eq!(ran.result.output, "answer 2");
    assert_eq!(ran.result.cycles_used, 3);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0]["stop_hook_active"], false);
    assert_eq!(seen[1]["stop_hook_active"], true);
    let last = ran.requests.last().unwrap();
    let feedback = format!("{:?}", last.messages.last().unwrap());
    assert!(feedback.contains("run the tests first"), "{feedback}");

    // A hook that never lets go is capped.
    let provider = script(
        (0..10)
            .map(|i| reply(&format!("answer {i}"), &[]))
            .collect(),
    );
    let (never, _) = hook("never", &[HookEvent::Stop], "", |_, _| {
        decision(HookAction::Deny("again".into()))
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![never];
    setup.max_stops = Some(3);
    let ran = run(setup, provider).await;
    assert_eq!(ran.result.status, Status::Complete);
    assert_eq!(ran.result.cycles_used, 4);
    assert!(
        ran.events
            .iter()
            .any(|e| matches!(e, Event::Notice { text, .. } if text.contains("3 times")))
    );
}

#[tokio::test]
async fn a_hook_can_stop_the_session_and_refuse_a_prompt() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Box", json!({"command": "one"})),
                ("Box", json!({"command": "two"})),
            ],
        ),
        reply("never", &[]),
    ]);
    let (stop, _) = hook("breaker", &[HookEvent::PreToolUse], "", |_, p| {
        if p["tool_input"]["command"] == "one" {
            decision(HookAction::Stop("budget policy".into()))
        } else {
            Ok(HookDecision::default())
        }
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![stop];
    let ran = run(setup, provider).await;
    assert_eq!(ran.result.status, Status::Stopped);
    assert_eq!(ran.result.status.exit_code(), 1);
    assert!(
        ran.result
            .error_message
            .as_deref()
            .unwrap()
            .contains("budget policy")
    );
    assert_eq!(ran.requests.len(), 1, "no model call after the stop");
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["denied", "denied"]);

    let (refuse, _) = hook(
        "prompt-filter",
        &[HookEvent::UserPromptSubmit],
        "",
        |_, p| {
            assert_eq!(p["prompt"], TASK);
            decision(HookAction::Deny("secrets in the prompt".into()))
        },
    );
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![refuse];
    let ran = run(setup, script(vec![reply("hi", &[])])).await;
    assert_eq!(ran.result.status, Status::Stopped);
    assert!(ran.requests.is_empty(), "the model never saw the prompt");
    assert!(
        ran.result
            .error_message
            .unwrap()
            .contains("secrets in the prompt")
    );
}

#[tokio::test]
async fn a_required_hook_that_fails_refuses_the_call() {
    let provider = script(vec![reply("", &[("Look", json!({}))]), reply("done", &[])]);
    let (flaky, _) = hook("flaky", &[HookEvent::PreToolUse], "", |_, _| {
        Err("it crashed".into())
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![flaky];
    let ran = run(setup, provider).await;
    assert_eq!(
        ran.statuses()[0].1,
        "success",
        "an optional hook's failure is skipped"
    );
    assert!(
        ran.events
            .iter()
            .any(|e| matches!(e, Event::Hook { outcome, .. } if outcome == "failed"))
    );

    let provider = script(vec![reply("", &[("Look", json!({}))]), reply("done", &[])]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let required = Arc::new(TestHook {
        name: "policy".into(),
        subscriptions: vec![Subscription::all(HookEvent::PreToolUse)],
        required: true,
        answer: Box::new(|_, _| Err("policy server down".into())),
        seen,
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![required];
    let ran = run(setup, provider).await;
    assert_eq!(ran.statuses()[0].1, "denied");
    let text = ran.result_of("call_0_Look");
    assert!(
        text.contains("required hook policy") && text.contains("policy server down"),
        "{text}"
    );
}

#[tokio::test]
async fn hooks_see_every_event_and_the_calls_of_sub_agents() {
    let provider = Routed::default()
        .with(
            TASK,
            vec![
                reply(
                    "",
                    &[(
                        "Task",
                        json!({"description": "d", "prompt": "sub task", "subagent_type": "Explore"}),
                    )],
                ),
                reply("done", &[]),
            ],
        )
        .with(
            "sub task",
            vec![reply("", &[("Look", json!({}))]), reply("found it", &[])],
        );
    let (watch, seen) = hook("watch", &HookEvent::ALL, "", |_, _| {
        Ok(HookDecision::default())
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![watch];
    let ran = run(setup, provider).await;
    assert_eq!(ran.result.status, Status::Complete);
    let seen = seen.lock().unwrap().clone();
    let names: Vec<&str> = seen
        .iter()
        .map(|p| p["hook_event_name"].as_str().unwrap())
        .collect();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreThink",
        "PostThink",
        "PreToolUse",
        "PostToolUse",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "SessionEnd",
    ] {
        assert!(names.contains(&event), "{event} in {names:?}");
    }
    let sub_call = seen
        .iter()
        .find(|p| p["hook_event_name"] == "PreToolUse" && p["tool_name"] == "Look")
        .expect("the sub-agent's Look passed the hooks");
    assert_eq!(sub_call["agent_type"], "Explore");
    let end = seen.last().unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "complete");
}

#[tokio::test]
async fn permission_request_hooks_answer_for_the_user() {
    let provider = script(vec![
        reply(
            "",
            &[
                ("Shell", json!({"command": "make"})),
                ("Shell", json!({"command": "curl evil"})),
            ],
        ),
        reply("done", &[]),
    ]);
    let (auto, _) = hook("auto", &[HookEvent::PermissionRequest], "Shell", |_, p| {
        assert!(p["reason"].as_str().unwrap().contains("approval"));
        if p["tool_input"]["command"] == "make" {
            decision(HookAction::Allow)
        } else {
            decision(HookAction::Deny("not on the list".into()))
        }
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![auto];
    let ran = run(setup, provider).await;
    let got: Vec<String> = ran.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(got, ["success", "denied"]);
    assert!(ran.result_of("call_1_Shell").contains("not on the list"));
}

#[tokio::test]
async fn asking_the_user_and_interrupts_reach_their_hooks() {
    let names = |seen: &Arc<Mutex<Vec<Value>>>| -> Vec<String> {
        seen.lock()
            .unwrap()
            .iter()
            .map(|p| p["hook_event_name"].as_str().unwrap().to_string())
            .collect()
    };
    let provider = script(vec![
        reply("", &[("Shell", json!({"command": "make"}))]),
        reply("done", &[]),
    ]);
    let (watch, seen) = hook("watch", &HookEvent::ALL, "", |_, _| {
        Ok(HookDecision::default())
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![watch];
    setup.approver = Some(Answers::new(vec![Approval::Once]));
    let ran = run(setup, provider).await;
    assert_eq!(ran.statuses()[0].1, "success");
    let seen_names = names(&seen);
    let at = |event: &str| {
        seen_names
            .iter()
            .position(|n| n == event)
            .unwrap_or_else(|| panic!("{event} in {seen_names:?}"))
    };
    assert!(at("PreToolUse") < at("PermissionRequest"));
    assert!(at("PermissionRequest") < at("Notification"));
    assert!(at("Notification") < at("PostToolUse"));
    let notice = seen.lock().unwrap()[at("Notification")].clone();
    assert_eq!(notice["notification_type"], "permission_prompt");

    let interrupt = CancellationToken::new();
    interrupt.cancel();
    let (watch, seen) = hook("watch", &HookEvent::ALL, "", |_, _| {
        Ok(HookDecision::default())
    });
    let mut setup = Setup::mode(PermissionMode::Default);
    setup.hooks = vec![watch];
    let ran = run_until(setup, script(vec![reply("never", &[])]), &interrupt).await;
    assert_eq!(ran.result.status, Status::Interrupted);
    let seen_names = names(&seen);
    assert_eq!(
        seen_names[seen_names.len() - 2..],
        ["Interrupt", "SessionEnd"],
        "{seen_names:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn checkpoint_hooks_run_around_the_checkpoints_of_a_kept_session() {
    use kaizen_loop::{CheckpointPolicy, SessionRecorder};
    use kaizen_session_store::{SessionMeta, SessionStore};
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(dir.path()).unwrap();
    store
        .create(&SessionMeta::new("s-guard", TASK, "scripted-model", "/w"))
        .unwrap();
    let state = SessionState::new("s-guard", "scripted-model");
    let policy = CheckpointPolicy {
        every_cycles: 2,
        every: std::time::Duration::from_secs(3600),
    };
    let recorder =
        Arc::new(SessionRecorder::new(store.clone(), "s-guard", 0, policy, &state).unwrap());
    // When PostCheckpoint runs, the checkpoint is on disk.
    let checking = store.clone();
    let on_disk = Arc::new(Mutex::new(Vec::new()));
    let counts = on_disk.clone();
    let (watch, seen) = hook(
        "watch",
        &[HookEvent::PreCheckpoint, HookEvent::PostCheckpoint],
        "",
        move |event, _| {
            let written = checking.list_checkpoints("s-guard").unwrap().len();
            counts.lock().unwrap().push((event, written));
            Ok(HookDecision::default())
        },
    );
    let provider = script(vec![
        reply("", &[("Look", json!({}))]),
        reply("", &[("Look", json!({}))]),
        reply("done", &[]),
    ]);
    let tools = tools();
    let guard = Guard::new(
        Permissions::new(PermissionMode::Default, RuleSet::new(), "/home/u"),
        HookDispatcher::new(vec![watch]),
        None,
    );
    let pricing = |_: &str, _: &Usage| 0.0;
    let agent = Agent {
        provider: &provider,
        tools: &tools,
        pricing: &pricing,
        config: AgentConfig::new("scripted-model", std::env::temp_dir()),
        observer: &kaizen_protocol::Silent,
        journal: Some(recorder),
        guard: Arc::new(guard),
    };
    let mut state = state;
    let result = agent.run(&mut state, TASK, &CancellationToken::new()).await;
    assert_eq!(result.status, Status::Complete);
    let seen: Vec<(String, String, u64)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["hook_event_name"].as_str().unwrap().to_string(),
                p["reason"].as_str().unwrap().to_string(),
                p["cycle"].as_u64().unwrap(),
            )
        })
        .collect();
    // Cycle 2's results are the first due (every 2 cycles); the end always is.
    assert_eq!(
        seen,
        [
            ("PreCheckpoint".into(), "periodic".into(), 2),
            ("PostCheckpoint".into(), "periodic".into(), 2),
            ("PreCheckpoint".into(), "end".into(), 3),
            ("PostCheckpoint".into(), "end".into(), 3),
        ]
    );
    let on_disk = on_disk.lock().unwrap().clone();
    assert_eq!(on_disk[0], (HookEvent::PreCheckpoint, 0), "{on_disk:?}");
    assert_eq!(on_disk[1], (HookEvent::PostCheckpoint, 1), "{on_disk:?}");
    assert_eq!(on_disk[3].1, 2, "{on_disk:?}");
}
