//! Hook plugins: a component that watches a session's events (a prompt, a
//! tool call and its result, the end of a run, ...) and may allow, refuse
//! or ask about a tool call, rewrite its input, add context for the model,
//! or stop the session.
//!
//! ```no_run
//! use kaizen_sdk::hook::{Decision, Event, Hook, Payload, Subscription, subscribe, HIGH};
//! use kaizen_sdk::export_hook;
//!
//! struct NoForcePush;
//!
//! impl Hook for NoForcePush {
//!     fn subscriptions() -> Vec<Subscription> {
//!         vec![subscribe(Event::PreToolUse, Some("Bash"), HIGH)]
//!     }
//!
//!     fn handle(_event: Event, payload: Payload) -> Decision {
//!         let command = payload["tool_input"]["command"].as_str().unwrap_or_default();
//!         if command.contains("push --force") {
//!             return Decision::deny("force-pushing is not allowed here");
//!         }
//!         Decision::proceed()
//!     }
//! }
//!
//! export_hook!(NoForcePush);
//! ```
//!
//! The manifest says `kinds = ["hook"]`. Payloads are JSON objects with
//! Claude Code's field names (`tool_name`, `tool_input`, `tool_response`,
//! `prompt`, ...); the project's docs/hooks.md lists each event's fields.

use crate::hook_bindings::exports::kaizen::plugin::hooks as wit;

pub use wit::{HookEvent as Event, Subscription};

/// An event's payload: a JSON object (`Null` if the host sent something
/// that does not parse).
pub type Payload = serde_json::Value;

/// Runs first: a security policy.
pub const CRITICAL: i32 = 300;
/// Before most hooks.
pub const HIGH: i32 = 200;
/// The default.
pub const NORMAL: i32 = 100;
/// After the others: an audit log that records their decisions.
pub const LOW: i32 = 0;

/// A subscription to `event`; `matcher` selects tools by name for tool
/// events (Claude Code's syntax: `Edit|Write`, or a regular expression);
/// `None` matches everything.
pub fn subscribe(event: Event, matcher: Option<&str>, priority: i32) -> Subscription {
    Subscription {
        event,
        matcher: matcher.map(str::to_owned),
        priority,
    }
}

/// A hook's answer to one event.
#[derive(Debug, Clone)]
pub struct Decision {
    action: wit::HookAction,
    updated_input: Option<serde_json::Value>,
    added_context: Option<String>,
    updated_output: Option<String>,
    system_message: Option<String>,
}

impl Decision {
    fn of(action: wit::HookAction) -> Self {
        Self {
            action,
            updated_input: None,
            added_context: None,
            updated_output: None,
            system_message: None,
        }
    }

    /// No opinion: carry on.
    pub fn proceed() -> Self {
        Self::of(wit::HookAction::Continue)
    }

    /// Let the tool call run without asking the user.
    pub fn allow() -> Self {
        Self::of(wit::HookAction::Allow)
    }

    /// Refuse the tool call (or the prompt; for `Stop`, refuse to end the
    /// run); `reason` goes to the model.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::of(wit::HookAction::Deny(reason.into()))
    }

    /// Ask the user before the tool call runs.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::of(wit::HookAction::Ask(reason.into()))
    }

    /// End the session; `reason` is reported to the user.
    pub fn stop(reason: impl Into<String>) -> Self {
        Self::of(wit::HookAction::Stop(reason.into()))
    }

    /// For `PreToolUse`: run the tool with this input instead (the host
    /// checks it against the tool's schema again).
    pub fn with_input(mut self, input: serde_json::Value) -> Self {
        self.updated_input = Some(input);
        self
    }

    /// Adds text the model sees with the event's result.
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.added_context = Some(context.into());
        self
    }

    /// For `PostToolUse`: the model sees this text instead of the result's
    /// (a redaction, a summary).
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.updated_output = Some(output.into());
        self
    }

    /// Adds a message for the user (not the model).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }

    #[doc(hidden)]
    pub fn into_wit(self) -> wit::HookDecision {
        wit::HookDecision {
            action: self.action,
            updated_input: self.updated_input.map(|input| input.to_string()),
            added_context: self.added_context,
            updated_output: self.updated_output,
            system_message: self.system_message,
        }
    }
}

/// A hook plugin: what it subscribes to, and how it answers.
pub trait Hook {
    /// The events it wants; asked once, when the plugin loads.
    fn subscriptions() -> Vec<Subscription>;

    /// Its answer to one event.
    fn handle(event: Event, payload: Payload) -> Decision;
}

#[doc(hidden)]
pub use wit::{Guest, HookDecision as WitDecision};

/// Exports a [`Hook`] type as the component's `hooks` interface:
/// `export_hook!(MyHook);`, once per plugin.
#[macro_export]
macro_rules! export_hook {
    ($hook:ty) => {
        const _: () = {
            struct KaizenSdkHook;

            impl $crate::hook::Guest for KaizenSdkHook {
                fn subscriptions() -> ::std::vec::Vec<$crate::hook::Subscription> {
                    <$hook as $crate::hook::Hook>::subscriptions()
                }

                fn handle(
                    event: $crate::hook::Event,
                    payload: ::std::string::String,
                ) -> $crate::hook::WitDecision {
                    let payload = $crate::serde_json::from_str(&payload)
                        .unwrap_or($crate::serde_json::Value::Null);
                    <$hook as $crate::hook::Hook>::handle(event, payload).into_wit()
                }
            }

            $crate::hook_bindings::export_hook_bindings!(KaizenSdkHook with_types_in $crate::hook_bindings);
        };
    };
}
