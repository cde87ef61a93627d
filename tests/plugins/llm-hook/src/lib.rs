//! `llm-hook`: after each `Glob` call, asks the session's model (the
//! `evaluator` role, through the `llm` import) what the result means, and
//! adds the answer for the model; a refused or failed completion adds why.

use kaizen_sdk::export_hook;
use kaizen_sdk::hook::{Decision, Event, Hook, NORMAL, Payload, Subscription, subscribe};
use kaizen_sdk::llm;

struct LlmHook;

impl Hook for LlmHook {
    fn subscriptions() -> Vec<Subscription> {
        vec![subscribe(Event::PostToolUse, Some("Glob"), NORMAL)]
    }

    fn handle(_event: Event, payload: Payload) -> Decision {
        let result = payload["tool_response"]["content"]
            .as_str()
            .unwrap_or_default();
        let asked = llm::ask("evaluator", Some("Say what this file list means."), result);
        let context = match asked {
            Ok(done) => format!("llm-hook ({}): {}", done.model, done.text),
            Err(err) => format!("llm-hook: {}", llm::describe(&err)),
        };
        Decision::proceed().with_context(context)
    }
}

export_hook!(LlmHook);
