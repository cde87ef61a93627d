//! `guard-hook`: a hook plugin in Rust, for the host's tests. It does
//! nothing unless the workspace holds `.test-hooks-on` (other suites load
//! every test plugin). Then it logs
//! every event it sees to `<cwd>/.hook-events.log` (one name per line);
//! refuses Bash commands with `rm -rf`; crashes on `trap-the-hook`; rewrites `ls` to `ls -a` with a
//! note for the model; adds context to the prompt; and refuses to let the
//! run end until the model's last message says DONE.

use kaizen_sdk::export_hook;
use kaizen_sdk::hook::{Decision, Event, HIGH, Hook, NORMAL, Payload, Subscription, subscribe};
use std::io::Write as _;

struct Guard;

const EVENTS: [Event; 17] = [
    Event::SessionStart,
    Event::SessionEnd,
    Event::UserPrompt,
    Event::PreThink,
    Event::PostThink,
    Event::PreToolUse,
    Event::PostToolUse,
    Event::PostToolUseFailure,
    Event::Stop,
    Event::PreCompact,
    Event::PreCheckpoint,
    Event::PostCheckpoint,
    Event::SubagentStart,
    Event::SubagentStop,
    Event::Interrupt,
    Event::PermissionRequest,
    Event::Notification,
];

impl Hook for Guard {
    fn subscriptions() -> Vec<Subscription> {
        EVENTS
            .into_iter()
            .map(|event| match event {
                Event::PreToolUse => subscribe(event, Some("Bash"), HIGH),
                _ => subscribe(event, None, NORMAL),
            })
            .collect()
    }

    fn handle(event: Event, payload: Payload) -> Decision {
        let on = payload["cwd"]
            .as_str()
            .is_some_and(|cwd| std::path::Path::new(cwd).join(".test-hooks-on").exists());
        if !on {
            return Decision::proceed();
        }
        log(&payload);
        match event {
            Event::PreToolUse => {
                let command = payload["tool_input"]["command"]
                    .as_str()
                    .unwrap_or_default();
                if command == "trap-the-hook" {
                    panic!("guard-hook crashed on purpose");
                }
                if command.contains("rm -rf") {
                    return Decision::deny("guard-hook: rm -rf is blocked in this repository");
                }
                if command.trim() == "ls" {
                    let mut input = payload["tool_input"].clone();
                    input["command"] = "ls -a".into();
                    return Decision::proceed()
                        .with_input(input)
                        .with_context("guard-hook: listed hidden files too");
                }
                Decision::proceed()
            }
            Event::UserPrompt => {
                Decision::proceed().with_context("guard-hook: this repository uses tabs")
            }
            Event::Stop => {
                let last = payload["last_assistant_message"]
                    .as_str()
                    .unwrap_or_default();
                if last.contains("DONE") {
                    Decision::proceed()
                } else {
                    Decision::deny("guard-hook: finish with the word DONE")
                }
            }
            _ => Decision::proceed(),
        }
    }
}

/// Appends the event's name to the log in the session's directory.
fn log(payload: &Payload) {
    let (Some(cwd), Some(name)) = (payload["cwd"].as_str(), payload["hook_event_name"].as_str())
    else {
        return;
    };
    let path = std::path::Path::new(cwd).join(".hook-events.log");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{name}");
    }
}

export_hook!(Guard);
