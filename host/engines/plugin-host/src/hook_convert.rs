//! The newest contract's `hooks` types, converted to and from the loop's
//! ([`kaizen_hooks`]). Components of older versions are adapted to these
//! types first ([`crate::contract_versions`]).

use crate::bindings::guest_hooks as current;
use kaizen_hooks::{HookAction, HookDecision, HookEvent, Matcher, Priority, Subscription};

/// What the loop calls each event, and what the contract calls it.
macro_rules! events {
    ($($loop:ident = $wit:ident),+ $(,)?) => {
        /// The event as the contract names it.
        pub(crate) fn to_wit(event: HookEvent) -> Option<current::HookEvent> {
            match event {
                $(HookEvent::$loop => Some(current::HookEvent::$wit),)+
            }
        }

        /// The event as the loop names it.
        pub(crate) fn from_wit(event: current::HookEvent) -> HookEvent {
            match event {
                $(current::HookEvent::$wit => HookEvent::$loop,)+
            }
        }
    };
}

events! {
    SessionStart = SessionStart,
    SessionEnd = SessionEnd,
    UserPromptSubmit = UserPrompt,
    PreThink = PreThink,
    PostThink = PostThink,
    PreToolUse = PreToolUse,
    PostToolUse = PostToolUse,
    PostToolUseFailure = PostToolUseFailure,
    Stop = Stop,
    PreCompact = PreCompact,
    PreCheckpoint = PreCheckpoint,
    PostCheckpoint = PostCheckpoint,
    SubagentStart = SubagentStart,
    SubagentStop = SubagentStop,
    Interrupt = Interrupt,
    PermissionRequest = PermissionRequest,
    Notification = Notification,
}

/// A subscription's matcher and priority, checked.
fn subscription(
    plugin: &str,
    event: HookEvent,
    matcher: Option<String>,
    priority: i32,
) -> Result<Subscription, String> {
    let matcher = Matcher::parse(matcher.as_deref().unwrap_or(""))
        .map_err(|err| format!("plugin `{plugin}`: a subscription's {err}"))?;
    Ok(Subscription {
        event,
        matcher,
        priority: Priority(priority),
    })
}

/// A component's subscriptions.
pub(crate) fn subscriptions(
    plugin: &str,
    declared: Vec<current::Subscription>,
) -> Result<Vec<Subscription>, String> {
    declared
        .into_iter()
        .map(|sub| subscription(plugin, from_wit(sub.event), sub.matcher, sub.priority))
        .collect()
}

fn action(action: current::HookAction) -> HookAction {
    match action {
        current::HookAction::Continue => HookAction::Continue,
        current::HookAction::Allow => HookAction::Allow,
        current::HookAction::Deny(reason) => HookAction::Deny(reason),
        current::HookAction::Ask(reason) => HookAction::Ask(reason),
        current::HookAction::Stop(reason) => HookAction::Stop(reason),
    }
}

fn updated_input(text: Option<String>) -> Result<Option<serde_json::Value>, String> {
    text.map(|text| {
        serde_json::from_str(&text)
            .map_err(|err| format!("returned an updated-input that is not valid JSON ({err})"))
    })
    .transpose()
}

/// A component's decision.
pub(crate) fn decision(decision: current::HookDecision) -> Result<HookDecision, String> {
    Ok(HookDecision {
        action: action(decision.action),
        updated_input: updated_input(decision.updated_input)?,
        updated_output: decision.updated_output,
        added_context: decision.added_context,
        system_message: decision.system_message,
    })
}
