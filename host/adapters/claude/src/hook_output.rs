//! What a command hook's exit code and output mean, as Claude Code
//! documents them: exit 0 answers (JSON on stdout for structured control,
//! plain text as context for the events that take it); exit 2 blocks,
//! with stderr as the reason; any other code is an error that does not
//! block.

use kaizen_hooks::{HookAction, HookDecision, HookEvent};
use serde_json::Value;

/// The decision of a hook of `event` that exited with `code` after
/// writing `stdout` and `stderr`; `Err` for a non-blocking failure (shown
/// to the user, the run goes on unless the hook is required).
pub fn decision_from(
    event: HookEvent,
    code: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Result<HookDecision, String> {
    match code {
        Some(0) => Ok(from_stdout(event, stdout)),
        Some(2) => Ok(blocked(event, stderr.trim())),
        Some(code) => Err(format!("exited with status {code}{}", tail(stderr))),
        None => Err(format!("was killed by a signal{}", tail(stderr))),
    }
}

fn tail(stderr: &str) -> String {
    let text = stderr.trim();
    if text.is_empty() {
        String::new()
    } else {
        let cut: String = text.chars().take(2000).collect();
        format!(": {cut}")
    }
}

/// Exit code 2: the events that can be blocked are; for the others,
/// stderr is only shown to the user.
fn blocked(event: HookEvent, reason: &str) -> HookDecision {
    let reason = if reason.is_empty() {
        "blocked by a hook (exit code 2)".to_string()
    } else {
        reason.to_string()
    };
    match event {
        HookEvent::PreToolUse
        | HookEvent::PostToolUse
        | HookEvent::PostToolUseFailure
        | HookEvent::UserPromptSubmit
        | HookEvent::Stop
        | HookEvent::SubagentStop
        | HookEvent::PermissionRequest => HookDecision::action(HookAction::Deny(reason)),
        _ => HookDecision {
            system_message: Some(reason),
            ..HookDecision::default()
        },
    }
}

/// Exit code 0: JSON on stdout, or plain text (context for the events
/// whose stdout Claude Code adds to the conversation).
fn from_stdout(event: HookEvent, stdout: &str) -> HookDecision {
    let text = stdout.trim();
    let json = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => {
            let takes_text = matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart);
            return HookDecision {
                added_context: (takes_text && !text.is_empty()).then(|| text.to_string()),
                ..HookDecision::default()
            };
        }
    };
    let string =
        |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let specific = json
        .get("hookSpecificOutput")
        .cloned()
        .unwrap_or(Value::Null);
    let reason = string(&json, "reason");
    let mut decision = HookDecision {
        system_message: string(&json, "systemMessage"),
        added_context: string(&specific, "additionalContext"),
        ..HookDecision::default()
    };
    // The legacy top-level decision, then the event's own fields.
    match string(&json, "decision").as_deref() {
        Some("block") => {
            decision.action =
                HookAction::Deny(reason.clone().unwrap_or_else(|| "blocked by a hook".into()))
        }
        Some("approve") if event == HookEvent::PreToolUse => decision.action = HookAction::Allow,
        _ => {}
    }
    match event {
        HookEvent::PreToolUse => {
            let why = string(&specific, "permissionDecisionReason")
                .or(reason)
                .unwrap_or_else(|| "a hook decided so".into());
            match string(&specific, "permissionDecision").as_deref() {
                Some("allow") => decision.action = HookAction::Allow,
                Some("deny") => decision.action = HookAction::Deny(why),
                Some("ask") => decision.action = HookAction::Ask(why),
                _ => {}
            }
            decision.updated_input = specific.get("updatedInput").cloned();
        }
        HookEvent::PermissionRequest => {
            let inner = specific.get("decision").cloned().unwrap_or(Value::Null);
            match string(&inner, "behavior").as_deref() {
                Some("allow") => {
                    decision.action = HookAction::Allow;
                    decision.updated_input = inner.get("updatedInput").cloned();
                }
                Some("deny") => {
                    let message =
                        string(&inner, "message").unwrap_or_else(|| "a hook refused it".into());
                    decision.action = HookAction::Deny(message);
                }
                _ => {}
            }
        }
        _ => {}
    }
    // `continue: false` stops everything, whatever else it says.
    if json.get("continue").and_then(Value::as_bool) == Some(false) {
        let why = string(&json, "stopReason").unwrap_or_else(|| "a hook asked to stop".into());
        decision.action = HookAction::Stop(why);
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(event: HookEvent, code: i32, stdout: &str, stderr: &str) -> HookDecision {
        decision_from(event, Some(code), stdout, stderr).unwrap()
    }

    #[test]
    fn exit_codes_mean_what_claude_code_says() {
        let plain = run(HookEvent::PreToolUse, 0, "all good", "");
        assert!(
            plain.is_no_op(),
            "plain stdout is not context for PreToolUse"
        );
        let blocked = run(HookEvent::PreToolUse, 2, "", "rm -rf is not allowed\n");
        assert_eq!(
            blocked.action,
            HookAction::Deny("rm -rf is not allowed".into())
        );
        let stop = run(HookEvent::Stop, 2, "", "run the tests");
        assert_eq!(stop.action, HookAction::Deny("run the tests".into()));
        let note = run(HookEvent::SessionEnd, 2, "", "bye");
        assert_eq!(note.action, HookAction::Continue);
        assert_eq!(note.system_message.as_deref(), Some("bye"));
        let err = decision_from(HookEvent::PreToolUse, Some(1), "", "boom").unwrap_err();
        assert!(err.contains("status 1") && err.contains("boom"), "{err}");
        assert!(decision_from(HookEvent::PreToolUse, None, "", "").is_err());
        let context = run(HookEvent::UserPromptSubmit, 0, "today is Tuesday\n", "");
        assert_eq!(context.added_context.as_deref(), Some("today is Tuesday"));
    }

    #[test]
    fn json_output_controls_pre_tool_use() {
        let out = json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no network tools",
                "additionalContext": "policy v2"
            },
            "systemMessage": "blocked curl"
        });
        let d = run(HookEvent::PreToolUse, 0, &out.to_string(), "");
        assert_eq!(d.action, HookAction::Deny("no network tools".into()));
        assert_eq!(d.added_context.as_deref(), Some("policy v2"));
        assert_eq!(d.system_message.as_deref(), Some("blocked curl"));

        let out = json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}});
        let d = run(HookEvent::PreToolUse, 0, &out.to_string(), "");
        assert_eq!(d.action, HookAction::Allow);
        assert_eq!(d.updated_input, Some(json!({"command": "ls -la"})));

        let out = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}});
        let d = run(HookEvent::PreToolUse, 0, &out.to_string(), "");
        assert_eq!(d.action, HookAction::Ask("sure?".into()));

        let legacy = json!({"decision": "block", "reason": "legacy no"});
        let d = run(HookEvent::PreToolUse, 0, &legacy.to_string(), "");
        assert_eq!(d.action, HookAction::Deny("legacy no".into()));
        let legacy = json!({"decision": "approve"});
        let d = run(HookEvent::PreToolUse, 0, &legacy.to_string(), "");
        assert_eq!(d.action, HookAction::Allow);
    }

    #[test]
    fn json_output_for_other_events() {
        let stop = json!({"decision": "block", "reason": "tests are failing"});
        let d = run(HookEvent::Stop, 0, &stop.to_string(), "");
        assert_eq!(d.action, HookAction::Deny("tests are failing".into()));
        let post = json!({"decision": "block", "reason": "lint failed", "hookSpecificOutput": {"additionalContext": "see eslint"}});
        let d = run(HookEvent::PostToolUse, 0, &post.to_string(), "");
        assert_eq!(d.action, HookAction::Deny("lint failed".into()));
        assert_eq!(d.added_context.as_deref(), Some("see eslint"));
        let halt = json!({"continue": false, "stopReason": "quota", "decision": "approve"});
        let d = run(HookEvent::PreToolUse, 0, &halt.to_string(), "");
        assert_eq!(d.action, HookAction::Stop("quota".into()));
        let request = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "not on weekends"}}});
        let d = run(HookEvent::PermissionRequest, 0, &request.to_string(), "");
        assert_eq!(d.action, HookAction::Deny("not on weekends".into()));
        let start = json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "branch main"}});
        let d = run(HookEvent::SessionStart, 0, &start.to_string(), "");
        assert_eq!(d.added_context.as_deref(), Some("branch main"));
    }
}
