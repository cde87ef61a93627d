//! The built-in `redact` hook: after every tool call (and failure), masks
//! what looks like a secret in the text the model is about to see, and
//! tells the user what it masked. Turned on with
//! `[hooks] builtins = ["redact"]` in the user's config.

mod patterns;

use kaizen_sdk::export_hook;
use kaizen_sdk::hook::{Decision, Event, HIGH, Hook, Payload, Subscription, subscribe};
pub use patterns::{Masked, mask};

struct Redact;

impl Hook for Redact {
    fn subscriptions() -> Vec<Subscription> {
        // Before other hooks (an audit log) see the result.
        vec![
            subscribe(Event::PostToolUse, None, HIGH),
            subscribe(Event::PostToolUseFailure, None, HIGH),
        ]
    }

    fn handle(event: Event, payload: Payload) -> Decision {
        let text = match event {
            Event::PostToolUse => payload["tool_response"]["content"].as_str(),
            _ => payload["error"].as_str(),
        };
        let Some(masked) = text.and_then(mask) else {
            return Decision::proceed();
        };
        let tool = payload["tool_name"].as_str().unwrap_or("a tool");
        Decision::proceed()
            .with_output(masked.text)
            .with_message(format!(
                "redact: masked {} secret(s) in the {tool} result ({})",
                masked.count,
                masked.kinds.join(", ")
            ))
    }
}

export_hook!(Redact);
