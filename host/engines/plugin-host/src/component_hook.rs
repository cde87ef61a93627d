//! A hook served by a component, as the loop sees it: the component's
//! `subscriptions` (asked once, at load) and `handle`, each event in a
//! fresh instance with the plugin's limits.

use crate::instance::PluginInstances;
use kaizen_hooks::{Hook, HookCall, HookEvent, HookFuture, Priority, Subscription};
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
    instances: Arc<PluginInstances>,
    subscriptions: Vec<Subscription>,
    settings: HookSettings,
}

impl ComponentHook {
    pub(crate) fn new(
        instances: Arc<PluginInstances>,
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
            name: format!("plugin {}", instances.identity.name),
            instances,
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
        self.handle_in(&HookCall::default(), event, payload)
    }

    fn handle_in<'a>(
        &'a self,
        call: &HookCall,
        event: HookEvent,
        payload: &'a serde_json::Value,
    ) -> HookFuture<'a> {
        let completions = call.completions.clone();
        Box::pin(async move {
            // A component subscribed only to events its contract names, so
            // `None` does not happen; it would mean "no opinion".
            let decision = self
                .instances
                .handle_hook(event, payload.to_string(), completions)
                .await?;
            Ok(decision.unwrap_or_default())
        })
    }
}
