//! The built-in `audit` hook: appends every prompt, tool call, permission
//! decision and result of a session to a hash-chained JSONL log in its own
//! data directory (`$KAIZEN_HOME/data/audit/<session>.jsonl`), which no
//! tool and no program can reach. Any change to the log afterwards is
//! found by `kaizen audit verify`. Turned on with
//! `[hooks] builtins = ["audit"]` in the user's config.

mod log;

use kaizen_sdk::export_hook;
use kaizen_sdk::hook::{Decision, Event, Hook, LOW, Payload, Subscription, subscribe};

/// What the log records.
const EVENTS: [Event; 12] = [
    Event::SessionStart,
    Event::UserPrompt,
    Event::PreToolUse,
    Event::PermissionRequest,
    Event::PostToolUse,
    Event::PostToolUseFailure,
    Event::SubagentStart,
    Event::SubagentStop,
    Event::Stop,
    Event::Interrupt,
    Event::Notification,
    Event::SessionEnd,
];

struct Audit;

impl Hook for Audit {
    fn subscriptions() -> Vec<Subscription> {
        // After every other hook: it records what they decided and what
        // the model saw (after a redaction).
        EVENTS
            .into_iter()
            .map(|event| subscribe(event, None, LOW))
            .collect()
    }

    fn handle(_event: Event, payload: Payload) -> Decision {
        let Ok(dir) = std::env::var("KAIZEN_DATA_DIR") else {
            return Decision::proceed();
        };
        match log::append(std::path::Path::new(&dir), &payload) {
            Ok(()) => Decision::proceed(),
            // A required audit hook fails its event closed; an optional one
            // is reported and skipped.
            Err(err) => panic!("audit: cannot append to the log: {err}"),
        }
    }
}

export_hook!(Audit);
