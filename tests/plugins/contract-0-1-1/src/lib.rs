//! A plugin built against the frozen `kaizen:plugin@0.1.1`, with raw
//! bindings: one tool (`Legacy`, which echoes its `text`) and a hook that
//! uses what 0.1.1 added to 0.1.0 (the `subagent-start` event and the
//! `updated-output` and `system-message` decision fields).

// `generate_contract!`: `wit_bindgen::generate!` on contract 0.1.1 in
// full, written by the build script.
include!(concat!(env!("OUT_DIR"), "/contract.rs"));

generate_contract! {
    inline: "
        package test:contract-0-1-1;
        world legacy {
            include kaizen:plugin/tool@0.1.1;
            include kaizen:plugin/hook@0.1.1;
        }
    ",
    world: "test:contract-0-1-1/legacy",
    generate_all,
}

use exports::kaizen::plugin::hooks::{self, HookAction, HookDecision, HookEvent, Subscription};
use exports::kaizen::plugin::tools::{self, ToolError, ToolOutput, ToolSpec};
use kaizen::plugin::types::{CallContext, ContentPart, DangerLevel};

struct Legacy;

impl tools::Guest for Legacy {
    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "Legacy".into(),
            description: "Echoes `text` back (a component of contract 0.1.1).".into(),
            input_schema: r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#.into(),
            danger: DangerLevel::Safe,
            read_only: true,
        }]
    }

    fn call(_ctx: CallContext, _name: String, input: String) -> Result<ToolOutput, ToolError> {
        // The host checked the input against the schema before the call.
        let input: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
        let text = input["text"].as_str().unwrap_or_default();
        Ok(ToolOutput {
            content: vec![ContentPart::Text(format!("0.1.1 says {text}"))],
            metadata: None,
        })
    }
}

impl hooks::Guest for Legacy {
    fn subscriptions() -> Vec<Subscription> {
        // Matchers that keep it out of other tests' sessions: its own tool,
        // and a sub-agent type no session has.
        [
            (HookEvent::SubagentStart, "legacy-probe"),
            (HookEvent::PostToolUse, "Legacy"),
        ]
        .into_iter()
        .map(|(event, matcher)| Subscription {
            event,
            matcher: Some(matcher.into()),
            priority: 0,
        })
        .collect()
    }

    fn handle(event: HookEvent, _payload: String) -> HookDecision {
        let mut decision = HookDecision {
            action: HookAction::Continue,
            updated_input: None,
            added_context: None,
            updated_output: None,
            system_message: None,
        };
        match event {
            HookEvent::SubagentStart => {
                decision.system_message = Some("a sub-agent starts (seen by 0.1.1)".into())
            }
            HookEvent::PostToolUse => decision.updated_output = Some("[replaced by 0.1.1]".into()),
            _ => {}
        }
        decision
    }
}

export!(Legacy);
