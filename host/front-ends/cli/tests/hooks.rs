//! Hook plugins through the real `kaizen run`: a hook component in Rust
//! (`guard-hook`, with the SDK) and one in Python (`py-hook`, with
//! componentize-py) deny, rewrite and annotate real Bash calls, keep the
//! run going from a Stop hook, and see every event of a session.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{
    Run, SESSION_EVENTS, bash, call_fields, completed, every_event_session, result_of, tool_results,
};
use kaizen_model_server::{Recorded, Reply};
use serde_json::{Value, json};
use std::process::Output;

/// A home and a workspace where the test hook plugins act (they stay
/// quiet where `.test-hooks-on` is missing).
fn hooks_on() -> Run {
    let run = Run::builtins_only();
    std::fs::write(run.ws().join(".test-hooks-on"), "").unwrap();
    run
}

/// A session in `run` answering `replies`, with the test plugins `names`
/// loaded.
async fn with_plugins(run: &Run, replies: Vec<Reply>, names: &[&str]) -> (Output, Vec<Recorded>) {
    let plugins: Vec<String> = names
        .iter()
        .map(|name| {
            kaizen_test_artifacts::plugin_dir(name)
                .display()
                .to_string()
        })
        .collect();
    let args: Vec<&str> = plugins
        .iter()
        .flat_map(|dir| ["--plugins", dir.as_str()])
        .collect();
    run.scripted_run(replies, &args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_and_python_hook_components_deny_rewrite_and_annotate() {
    let run = hooks_on();
    let workspace = run.ws();
    std::fs::write(workspace.join(".hidden-file"), "x").unwrap();
    let replies = vec![
        bash("rm -rf build"),
        bash("ls"),
        bash("echo hello there"),
        bash("printf 'SECRET-42'"),
        bash("curl http://example.invalid"),
        Reply::tool("Bash", &json!({ "command": 5 }).to_string()),
        Reply::text("All finished."),
        Reply::text("All finished. DONE"),
    ];
    let (output, requests) = with_plugins(&run, replies, &["guard-hook", "py-hook"]).await;
    let result = completed(&output);
    assert_eq!(result["output"], "All finished. DONE");
    let results = tool_results(&requests[6].body);
    assert_eq!(results.len(), 6, "{results:?}");
    assert!(
        results[0].contains("guard-hook: rm -rf is blocked"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains(".hidden-file")
            && results[1].contains("guard-hook: listed hidden files too"),
        "the Rust hook rewrote ls to ls -a: {}",
        results[1]
    );
    assert!(
        results[2].contains("HELLO THERE") && results[2].contains("py-hook: shouted the echo"),
        "the Python hook rewrote the command: {}",
        results[2]
    );
    assert!(
        results[3].contains("py-hook: the output holds a secret"),
        "{}",
        results[3]
    );
    assert!(
        results[4].contains("py-hook: no network clients"),
        "{}",
        results[4]
    );
    assert!(results[5].contains("input schema"), "{}", results[5]);
    assert_eq!(
        call_fields(&result, "status"),
        ["denied", "success", "success", "success", "denied", "error"]
    );
    let denials: Vec<&Value> = result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(denials.len(), 2);
    assert_eq!(denials[0]["tool_input"]["command"], "rm -rf build");
    // The Stop hook sent the model back once, with its reason.
    assert_eq!(requests.len(), 8);
    let last = requests[7].body.to_string();
    assert!(last.contains("finish with the word DONE"), "{last}");
    // The prompt carried the hook's context.
    let first = requests[0].body.to_string();
    assert!(
        first.contains("guard-hook: this repository uses tabs"),
        "{first}"
    );

    let log = std::fs::read_to_string(workspace.join(".hook-events.log")).unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreThink",
        "PostThink",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ] {
        assert!(log.lines().any(|line| line == event), "{event} in:\n{log}");
    }
    assert_eq!(log.lines().last(), Some("SessionEnd"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_hook_is_skipped_unless_required_then_it_refuses_the_call() {
    for required in [false, true] {
        let run = hooks_on();
        run.set_config(format!(
            "[hooks.plugins.guard-hook]\nrequired = {required}\npriority = \"CRITICAL\"\n"
        ));
        let replies = vec![bash("trap-the-hook"), Reply::text("DONE")];
        let (output, requests) = with_plugins(&run, replies, &["guard-hook"]).await;
        let result = result_of(&output);
        let text = tool_results(&requests[1].body).join("\n");
        if required {
            assert_eq!(result["tool_calls"][0]["status"], "denied", "{result}");
            assert!(
                text.contains("required hook plugin guard-hook failed"),
                "{text}"
            );
            assert!(text.contains("crashed"), "{text}");
        } else {
            assert_eq!(result["tool_calls"][0]["status"], "success", "{result}");
            assert!(text.contains("command not found"), "it ran: {text}");
        }
        assert_eq!(result["status"], "complete");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_builtin_redact_and_audit_hooks_mask_secrets_and_keep_a_verifiable_log() {
    const KEY: &str = "AKIAIOSFODNN7EXAMPLQ";
    let run = Run::builtins_only();
    let home = run.home.path();
    run.set_config(
        "[hooks]\nbuiltins = [\"redact\", \"audit\"]\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    let replies = vec![
        bash(&format!("echo aws_key={KEY}; echo done")),
        bash("rm -rf build"),
        Reply::text("Finished."),
    ];
    let (output, requests) = run.scripted_run(replies, &[]).await;
    completed(&output);
    let results = tool_results(&requests[2].body);
    assert!(
        results[0].contains("[REDACTED:aws-access-key-id]") && results[0].contains("done"),
        "{}",
        results[0]
    );
    // The model wrote the key in its own command; the result it got back
    // did not carry it.
    assert!(!results[0].contains(KEY), "{}", results[0]);

    // The log: every step, the refusal, the redacted text; the chain holds.
    let log_dir = home.join("data/audit");
    let logs: Vec<_> = std::fs::read_dir(&log_dir).unwrap().flatten().collect();
    assert_eq!(logs.len(), 1);
    let log_path = logs[0].path();
    let log = std::fs::read_to_string(&log_path).unwrap();
    let post: Value = log
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|entry| entry["event"] == "PostToolUse")
        .unwrap();
    let seen = post["record"]["tool_response"]["content"].as_str().unwrap();
    assert_eq!(
        seen, "aws_key=[REDACTED:aws-access-key-id]\ndone",
        "the log holds the result as the model saw it"
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            log.contains(&format!("\"event\":\"{event}\"")),
            "{event} in the log"
        );
    }
    assert!(
        log.contains("\"denied\":true") && log.contains("Bash(rm:*)"),
        "{log}"
    );
    let verify = || common::at_home(home, &["audit", "verify"]);
    let ok = verify();
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success() && text.contains("chain intact"),
        "{text}{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    // Someone removes the last entries (what the session did at its end):
    // the chain still holds, but the end its session recorded is gone.
    let kept: Vec<&str> = log.lines().collect();
    let cut = kept[..kept.len() - 2].join("\n") + "\n";
    std::fs::write(&log_path, &cut).unwrap();
    assert!(
        kaizen_audit_log::verify(&cut).is_ok(),
        "the chain alone holds"
    );
    let truncated = verify();
    let text = String::from_utf8_lossy(&truncated.stdout);
    assert_eq!(truncated.status.code(), Some(1), "{text}");
    assert!(text.contains("the last were removed"), "{text}");

    // Someone edits the log: the chain says where.
    std::fs::write(&log_path, log.replacen("echo aws_key", "echo nothing", 1)).unwrap();
    let broken = verify();
    let text = String::from_utf8_lossy(&broken.stdout);
    assert_eq!(broken.status.code(), Some(1), "{text}");
    assert!(
        text.contains("BROKEN") && text.contains("was changed"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_component_hook_sees_every_event_of_a_session() {
    let run = hooks_on();
    let workspace = run.ws();
    let replies = every_event_session(run.home.path(), &workspace);
    let (output, _) = with_plugins(&run, replies, &["guard-hook"]).await;
    let result = result_of(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(result["status"], "complete", "{stderr}");
    let log = std::fs::read_to_string(workspace.join(".hook-events.log")).unwrap();
    for event in SESSION_EVENTS {
        assert!(log.lines().any(|line| line == *event), "{event} in:\n{log}");
    }
}
