//! `llm-hook`: asks the session's model (through the `llm` import) on a
//! tool event and on the session's own events, and adds what it answers
//! for the model; a refused or failed completion adds why.
//!
//! - after each `Glob` call (`PostToolUse`), the `evaluator` role says
//!   what the result means;
//! - on `UserPromptSubmit`, the `planner` role restates the task;
//! - on `SessionEnd`, the `evaluator` role sums the session up (nothing
//!   reaches the model any more; the completion only counts).

use kaizen_sdk::export_hook;
use kaizen_sdk::hook::{Decision, Event, Hook, NORMAL, Payload, Subscription, subscribe};
use kaizen_sdk::llm;

struct LlmHook;

impl Hook for LlmHook {
    fn subscriptions() -> Vec<Subscription> {
        vec![
            subscribe(Event::PostToolUse, Some("Glob"), NORMAL),
            subscribe(Event::UserPrompt, None, NORMAL),
            subscribe(Event::SessionEnd, None, NORMAL),
        ]
    }

    fn handle(event: Event, payload: Payload) -> Decision {
        let (role, system, prompt) = match event {
            Event::UserPrompt => (
                "planner",
                "Restate the task in one line.",
                payload["prompt"].as_str().unwrap_or_default(),
            ),
            Event::SessionEnd => (
                "evaluator",
                "Sum the session up.",
                payload["reason"].as_str().unwrap_or_default(),
            ),
            _ => (
                "evaluator",
                "Say what this file list means.",
                payload["tool_response"]["content"]
                    .as_str()
                    .unwrap_or_default(),
            ),
        };
        let context = match llm::ask(role, Some(system), prompt) {
            Ok(done) => format!("llm-hook ({}): {}", done.model, done.text),
            Err(err) => format!("llm-hook: {}", llm::describe(&err)),
        };
        Decision::proceed().with_context(context)
    }
}

export_hook!(LlmHook);
