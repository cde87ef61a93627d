//! A hook served by a component, as the loop sees it: the component's
//! `subscriptions` (asked once, at load) and `handle`, each event in a
//! fresh instance with the plugin's limits.

use crate::bindings::guest_hooks::{self, HookAction as WitAction, HookEvent as WitEvent};
use crate::runtime::PluginRuntime;
use kaizen_hooks::{
    Hook, HookAction, HookDecision, HookEvent, HookFuture, Matcher, Priority, Subscription,
};
use std::sync::Arc;
use std::time::Duration;

/// How the operator wants one hook plugin to run, over what it declares.
#[derive(Debug, Clone, Default)]
pub struct HookSettings {
    /// Its failures fail its events closed.
    pub required: bool,
    /// Every subscription at this priority instead of the plugin's own.
    pub priority: Option<Priority>,
    /// How long one event may take.
    pub timeout: Option<Duration>,
}

/// One hook plugin.
pub struct ComponentHook {
    name: String,
    runtime: Arc<PluginRuntime>,
    subscriptions: Vec<Subscription>,
    settings: HookSettings,
}

impl ComponentHook {
    pub(crate) fn new(
        runtime: Arc<PluginRuntime>,
        subscriptions: Vec<Subscription>,
        settings: HookSettings,
    ) -> Self {
        let subscriptions = match settings.priority {
            Some(priority) => subscriptions
                .into_iter()
                .map(|sub| Subscription { priority, ..sub })
                .collect(),
            None => subscriptions,
        };
        Self {
            name: format!("plugin {}", runtime.identity.name),
            runtime,
            subscriptions,
            settings,
        }
    }
}

impl Hook for ComponentHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn subscriptions(&self) -> &[Subscription] {
        &self.subscriptions
    }

    fn required(&self) -> bool {
        self.settings.required
    }

    fn timeout(&self) -> Option<Duration> {
        self.settings.timeout
    }

    fn handle<'a>(&'a self, event: HookEvent, payload: &'a serde_json::Value) -> HookFuture<'a> {
        Box::pin(async move {
            // A component subscribed only to events its contract names.
            let Some(wit_event) = to_wit(event) else {
                return Ok(HookDecision::default());
            };
            let decision = self
                .runtime
                .handle_hook(wit_event, payload.to_string())
                .await
                .map_err(|err| err.message)?;
            from_wit(decision)
        })
    }
}

/// A component's subscriptions as the loop's; a matcher that is not a
/// valid expression is an error naming it.
pub(crate) fn convert_subscriptions(
    plugin: &str,
    subscriptions: Vec<guest_hooks::Subscription>,
) -> Result<Vec<Subscription>, String> {
    subscriptions
        .into_iter()
        .map(|sub| {
            let matcher = Matcher::parse(sub.matcher.as_deref().unwrap_or(""))
                .map_err(|err| format!("plugin `{plugin}`: a subscription's {err}"))?;
            Ok(Subscription {
                event: from_wit_event(sub.event),
                matcher,
                priority: Priority(sub.priority),
            })
        })
        .collect()
}

fn from_wit_event(event: WitEvent) -> HookEvent {
    match event {
        WitEvent::SessionStart => HookEvent::SessionStart,
        WitEvent::SessionEnd => HookEvent::SessionEnd,
        WitEvent::UserPrompt => HookEvent::UserPromptSubmit,
        WitEvent::PreThink => HookEvent::PreThink,
        WitEvent::PostThink => HookEvent::PostThink,
        WitEvent::PreToolUse => HookEvent::PreToolUse,
        WitEvent::PostToolUse => HookEvent::PostToolUse,
        WitEvent::PostToolUseFailure => HookEvent::PostToolUseFailure,
        WitEvent::Stop => HookEvent::Stop,
        WitEvent::PreCompact => HookEvent::PreCompact,
        WitEvent::PreCheckpoint => HookEvent::PreCheckpoint,
        WitEvent::PostCheckpoint => HookEvent::PostCheckpoint,
    }
}

fn to_wit(event: HookEvent) -> Option<WitEvent> {
    Some(match event {
        HookEvent::SessionStart => WitEvent::SessionStart,
        HookEvent::SessionEnd => WitEvent::SessionEnd,
        HookEvent::UserPromptSubmit => WitEvent::UserPrompt,
        HookEvent::PreThink => WitEvent::PreThink,
        HookEvent::PostThink => WitEvent::PostThink,
        HookEvent::PreToolUse => WitEvent::PreToolUse,
        HookEvent::PostToolUse => WitEvent::PostToolUse,
        HookEvent::PostToolUseFailure => WitEvent::PostToolUseFailure,
        HookEvent::Stop => WitEvent::Stop,
        HookEvent::PreCompact => WitEvent::PreCompact,
        HookEvent::PreCheckpoint => WitEvent::PreCheckpoint,
        HookEvent::PostCheckpoint => WitEvent::PostCheckpoint,
        HookEvent::SubagentStart
        | HookEvent::SubagentStop
        | HookEvent::Interrupt
        | HookEvent::PermissionRequest
        | HookEvent::Notification => return None,
    })
}

fn from_wit(decision: guest_hooks::HookDecision) -> Result<HookDecision, String> {
    let updated_input =
        match decision.updated_input {
            None => None,
            Some(text) => Some(serde_json::from_str(&text).map_err(|err| {
                format!("returned an updated-input that is not valid JSON ({err})")
            })?),
        };
    Ok(HookDecision {
        action: match decision.action {
            WitAction::Continue => HookAction::Continue,
            WitAction::Allow => HookAction::Allow,
            WitAction::Deny(reason) => HookAction::Deny(reason),
            WitAction::Ask(reason) => HookAction::Ask(reason),
            WitAction::Stop(reason) => HookAction::Stop(reason),
        },
        updated_input,
        added_context: decision.added_context,
        ..HookDecision::default()
    })
}
