//! What hooks add to each tool call: the `PreToolUse` and `PostToolUse`
//! dispatch of one call with 0, 1 and 5 component hooks (the test plugin
//! `guard-hook`, warm, a fresh instance per event as every non-stateful
//! hook plugin gets), the built-in `redact` (stateful, its patterns
//! compiled once), and one Claude Code command hook (`cat > /dev/null`
//! in the OS sandbox); and the permission rules' verdict on a Bash call
//! against 100 rules. Medians against the budget (≤ 50 µs per component
//! hook, warm).
//!
//! `cargo bench -p kaizen --bench hooks`

use kaizen_claude::{ClaudeSettings, CommandHook, CommandRunner};
use kaizen_hooks::{Hook, HookCall, HookEvent};
use kaizen_loop::HookDispatcher;
use kaizen_permissions::{Effect, Permissions, Rule, RuleOrigin, RuleSet};
use kaizen_plugin_host::{
    EngineOptions, GrantPolicy, HookSettings, HostOptions, Origin, PluginHost, PluginSet,
    PluginSource, sources_in,
};
use kaizen_protocol::PermissionMode;
use kaizen_sandbox::Containment;
use kaizen_tools::{Danger, RuleSubject, SubjectKind, Tool, ToolFuture, ToolSpec};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROUNDS: usize = 2000;
const COMMAND_ROUNDS: usize = 50;
const BUDGET_PER_HOOK_US: f64 = 50.0;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn payloads(workspace: &Path) -> (Value, Value) {
    let cwd = workspace.display().to_string();
    let pre = json!({
        "session_id": "bench", "transcript_path": null, "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cargo test --workspace"}, "tool_use_id": "call_1",
    });
    let post = json!({
        "session_id": "bench", "transcript_path": null, "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cargo test --workspace"}, "tool_use_id": "call_1",
        "tool_response": {"content": "running 42 tests\n".repeat(50) + "test result: ok", "metadata": null},
    });
    (pre, post)
}

/// The median time of one call's PreToolUse and PostToolUse dispatch.
async fn per_call(hooks: Vec<Arc<dyn Hook>>, workspace: &Path, rounds: usize) -> Duration {
    let dispatcher = HookDispatcher::new(hooks);
    let (pre, post) = payloads(workspace);
    let call = HookCall::default();
    for _ in 0..rounds / 10 + 1 {
        dispatcher
            .dispatch(HookEvent::PreToolUse, Some("Bash"), pre.clone(), &call)
            .await;
    }
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (pre, post) = (pre.clone(), post.clone());
        let started = Instant::now();
        let a = dispatcher
            .dispatch(HookEvent::PreToolUse, Some("Bash"), pre, &call)
            .await;
        let b = dispatcher
            .dispatch(HookEvent::PostToolUse, Some("Bash"), post, &call)
            .await;
        samples.push(started.elapsed());
        assert!(
            a.reports
                .iter()
                .chain(&b.reports)
                .all(|r| r.outcome != "failed"),
            "{:?}",
            a.reports
        );
    }
    median(samples)
}

struct Shell(ToolSpec, RuleSubject);

impl Tool for Shell {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "bench"
    }
    fn rule_subject(&self) -> Option<&RuleSubject> {
        Some(&self.1)
    }
    fn call<'a>(&'a self, _: &'a kaizen_tools::CallContext, _: &'a Value) -> ToolFuture<'a> {
        Box::pin(async { unreachable!("not called") })
    }
}

fn rules_verdict(workspace: &Path) -> Duration {
    let mut rules = RuleSet::new();
    for i in 0..100 {
        let origin = RuleOrigin {
            label: "bench".into(),
            base: workspace.to_path_buf(),
        };
        let (effect, text) = match i % 4 {
            0 => (Effect::Allow, format!("Bash(tool{i} run:*)")),
            1 => (Effect::Deny, format!("Bash(danger{i}:*)")),
            2 => (Effect::Ask, format!("Read(./secret{i}/**)")),
            _ => (Effect::Allow, format!("WebFetch(domain:site{i}.example)")),
        };
        rules.push(Rule::parse(effect, &text, origin, workspace).unwrap());
    }
    let permissions = Permissions::new(PermissionMode::Default, rules, workspace);
    let tool = Shell(
        ToolSpec {
            name: "Bash".into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            danger: Danger::High,
            read_only: false,
        },
        RuleSubject {
            kind: SubjectKind::Command,
            field: "command".into(),
        },
    );
    let input = json!({"command": "cd src && cargo test --workspace 2>&1 | tail -n 20"});
    let mut samples = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        std::hint::black_box(permissions.evaluate(&tool, &input, workspace));
        samples.push(started.elapsed());
    }
    median(samples)
}

/// The built-in `redact`, as the build left it in the shared guest target
/// directory, in a plugin directory of its own.
fn redact_dir(scratch: &Path) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir");
    let wasm = target.join("wasm-guests/wasm32-wasip2/release/kaizen_builtin_redact.wasm");
    let dir = scratch.join("redact");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../plugins/redact/plugin.toml"
    );
    std::fs::copy(manifest, dir.join("plugin.toml")).unwrap();
    std::fs::copy(&wasm, dir.join("redact.wasm"))
        .unwrap_or_else(|err| panic!("{}: {err} (build the kaizen binary first)", wasm.display()));
    dir
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let workspace: PathBuf = scratch.path().canonicalize().expect("workspace");
    let host = PluginHost::new(HostOptions {
        cache_dir: Some(scratch.path().join("cache")),
        engine: EngineOptions::default(),
        ..HostOptions::default()
    })
    .expect("plugin host");
    let policy = GrantPolicy::new(&workspace);
    let mut sources: Vec<PluginSource> = sources_in(&[(
        kaizen_test_artifacts::plugin_dir("guard-hook"),
        Origin::Flag,
    )]);
    sources.extend(sources_in(&[(redact_dir(scratch.path()), Origin::Flag)]));
    let set = PluginSet::load(&host, &sources, &policy).await;
    assert!(
        set.failed.is_empty(),
        "{:?}",
        set.failed.iter().map(|f| f.summary()).collect::<Vec<_>>()
    );
    let hook_of = |name: &str| {
        set.loaded
            .iter()
            .find(|p| p.manifest.plugin.name == name)
            .and_then(|p| p.hook_handle(HookSettings::default()))
            .unwrap_or_else(|| panic!("{name} is a hook plugin"))
    };

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "kaizen hook overhead per tool call (PreToolUse + PostToolUse), medians of {ROUNDS}; load {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!();
    let none = per_call(Vec::new(), &workspace, ROUNDS).await;
    let one = per_call(vec![hook_of("guard-hook")], &workspace, ROUNDS).await;
    let five = per_call(
        (0..5).map(|_| hook_of("guard-hook")).collect(),
        &workspace,
        ROUNDS,
    )
    .await;
    let redact = per_call(vec![hook_of("redact")], &workspace, ROUNDS).await;
    println!(
        "{:<44} {:>12} {:>18}",
        "hooks", "per call", "per hook and event"
    );
    println!("{:<44} {:>9.1} µs {:>15} ", "none", us(none), "-");
    for (label, took, hooks) in [
        ("1 component hook (guard-hook)", one, 1.0),
        ("5 component hooks (guard-hook × 5)", five, 5.0),
        ("the built-in redact (stateful, regexes)", redact, 1.0),
    ] {
        let per_hook = (us(took) - us(none)) / hooks / 2.0;
        println!("{label:<44} {:>9.1} µs {per_hook:>15.1} µs", us(took));
    }

    let settings = ClaudeSettings {
        path: workspace.join(".claude/settings.json"),
        hooks: serde_json::from_value(json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat > /dev/null"}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat > /dev/null"}]}],
        }))
        .unwrap(),
        ..ClaudeSettings::default()
    };
    let containment = Containment {
        writable: vec![workspace.clone()],
        ..Containment::default()
    };
    let policy = containment.policy(containment.session_scope(), &[]);
    let runner = Arc::new(CommandRunner::new(policy, workspace.clone()));
    let (commands, problems) = CommandHook::from_settings(&settings, &runner);
    assert!(problems.is_empty(), "{problems:?}");
    let commands: Vec<Arc<dyn Hook>> = commands
        .into_iter()
        .map(|h| Arc::new(h) as Arc<dyn Hook>)
        .collect();
    let command = per_call(commands, &workspace, COMMAND_ROUNDS).await;
    println!(
        "{:<44} {:>9.1} µs {:>15.1} µs   (median of {COMMAND_ROUNDS})",
        "1 command hook (cat, in the OS sandbox)",
        us(command),
        (us(command) - us(none)) / 2.0
    );
    let verdict = rules_verdict(&workspace);
    println!(
        "{:<44} {:>9.1} µs",
        "permission verdict, 100 rules, compound Bash",
        us(verdict)
    );
    println!();
    let per_hook = (us(one) - us(none)) / 2.0;
    let verdict = if per_hook <= BUDGET_PER_HOOK_US {
        "within budget"
    } else {
        "OVER BUDGET"
    };
    println!(
        "one component hook per event: {per_hook:.1} µs (≤ {BUDGET_PER_HOOK_US} µs: {:.2}×, {verdict})",
        per_hook / BUDGET_PER_HOOK_US
    );
}
