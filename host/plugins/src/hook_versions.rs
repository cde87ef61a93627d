//! The contract's `hooks` types in each version, converted to and from the
//! loop's ([`kaizen_hooks`]). 0.1.0 lacks five events and two decision
//! fields; a component built against it is never sent those events.

use crate::bindings::{guest_hooks as current, v0_1_0::guest_hooks as v0};
use kaizen_hooks::{HookAction, HookDecision, HookEvent, Matcher, Priority, Subscription};

/// What the loop calls each event, and what 0.1.0 and later call it.
macro_rules! events {
    ($($loop:ident = $wit:ident $(in $old:ident)?),+ $(,)?) => {
        /// The event as a current component knows it.
        pub(crate) fn to_wit(event: HookEvent) -> Option<current::HookEvent> {
            match event {
                $(HookEvent::$loop => Some(current::HookEvent::$wit),)+
            }
        }

        fn from_wit(event: current::HookEvent) -> HookEvent {
            match event {
                $(current::HookEvent::$wit => HookEvent::$loop,)+
            }
        }

        /// The event as a 0.1.0 component knows it, if it does.
        pub(crate) fn to_wit_v0_1_0(event: HookEvent) -> Option<v0::HookEvent> {
            #[allow(unreachable_patterns)]
            match event {
                $($(HookEvent::$loop => Some(v0::HookEvent::$old),)?)+
                _ => None,
            }
        }

        fn from_wit_v0_1_0(event: v0::HookEvent) -> HookEvent {
            match event {
                $($(v0::HookEvent::$old => HookEvent::$loop,)?)+
            }
        }
    };
}

events! {
    SessionStart = SessionStart in SessionStart,
    SessionEnd = SessionEnd in SessionEnd,
    UserPromptSubmit = UserPrompt in UserPrompt,
    PreThink = PreThink in PreThink,
    PostThink = PostThink in PostThink,
    PreToolUse = PreToolUse in PreToolUse,
    PostToolUse = PostToolUse in PostToolUse,
    PostToolUseFailure = PostToolUseFailure in PostToolUseFailure,
    Stop = Stop in Stop,
    PreCompact = PreCompact in PreCompact,
    PreCheckpoint = PreCheckpoint in PreCheckpoint,
    PostCheckpoint = PostCheckpoint in PostCheckpoint,
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

/// A current component's subscriptions.
pub(crate) fn subscriptions(
    plugin: &str,
    declared: Vec<current::Subscription>,
) -> Result<Vec<Subscription>, String> {
    declared
        .into_iter()
        .map(|sub| subscription(plugin, from_wit(sub.event), sub.matcher, sub.priority))
        .collect()
}

/// A 0.1.0 component's subscriptions.
pub(crate) fn subscriptions_v0_1_0(
    plugin: &str,
    declared: Vec<v0::Subscription>,
) -> Result<Vec<Subscription>, String> {
    declared
        .into_iter()
        .map(|sub| {
            let event = from_wit_v0_1_0(sub.event);
            subscription(plugin, event, sub.matcher, sub.priority)
        })
        .collect()
}

macro_rules! action {
    ($module:ident, $action:expr) => {
        match $action {
            $module::HookAction::Continue => HookAction::Continue,
            $module::HookAction::Allow => HookAction::Allow,
            $module::HookAction::Deny(reason) => HookAction::Deny(reason),
            $module::HookAction::Ask(reason) => HookAction::Ask(reason),
            $module::HookAction::Stop(reason) => HookAction::Stop(reason),
        }
    };
}

fn updated_input(text: Option<String>) -> Result<Option<serde_json::Value>, String> {
    text.map(|text| {
        serde_json::from_str(&text)
            .map_err(|err| format!("returned an updated-input that is not valid JSON ({err})"))
    })
    .transpose()
}

/// A current component's decision.
pub(crate) fn decision(decision: current::HookDecision) -> Result<HookDecision, String> {
    Ok(HookDecision {
        action: action!(current, decision.action),
        updated_input: updated_input(decision.updated_input)?,
        updated_output: decision.updated_output,
        added_context: decision.added_context,
        system_message: decision.system_message,
    })
}

/// A 0.1.0 component's decision.
pub(crate) fn decision_v0_1_0(decision: v0::HookDecision) -> Result<HookDecision, String> {
    Ok(HookDecision {
        action: action!(v0, decision.action),
        updated_input: updated_input(decision.updated_input)?,
        added_context: decision.added_context,
        ..HookDecision::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_converts_both_ways_and_old_components_miss_the_new_ones() {
        let mut old = 0;
        for event in HookEvent::ALL {
            let wit = to_wit(event).expect("the newest contract names every event");
            assert_eq!(from_wit(wit), event);
            if let Some(wit) = to_wit_v0_1_0(event) {
                assert_eq!(from_wit_v0_1_0(wit), event);
                old += 1;
            }
        }
        assert_eq!(old, 12);
        assert_eq!(to_wit_v0_1_0(HookEvent::PermissionRequest), None);
    }
}
