//! Contract 0.1.0, whose `hooks` export had fewer events and decision
//! fields: its bindings, and its values converted to and from the newest's.
//! A component built against it is never sent the events it lacks.

use super::{CallHooks, LoadHooks, newest};
use crate::state::PluginState;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

/// The `hook` world of contract 0.1.0.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../../../wit/v0.1.0",
        world: "hook",
        imports: { default: async },
        exports: { default: async },
    });
}

use bindings::exports::kaizen::plugin::hooks as v0;

/// The events 0.1.0 has, named alike in both versions.
macro_rules! shared_events {
    ($($event:ident),+ $(,)?) => {
        /// The event as a 0.1.0 component knows it, if it does.
        fn to_v0(event: newest::HookEvent) -> Option<v0::HookEvent> {
            #[allow(unreachable_patterns)]
            match event {
                $(newest::HookEvent::$event => Some(v0::HookEvent::$event),)+
                _ => None,
            }
        }

        fn from_v0(event: v0::HookEvent) -> newest::HookEvent {
            match event {
                $(v0::HookEvent::$event => newest::HookEvent::$event,)+
            }
        }
    };
}

shared_events! {
    SessionStart,
    SessionEnd,
    UserPrompt,
    PreThink,
    PostThink,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    PreCompact,
    PreCheckpoint,
    PostCheckpoint,
}

/// The component's 0.1.0 `hooks` export, if it has one.
pub(super) fn find_hooks(pre: &InstancePre<PluginState>) -> Option<Box<dyn LoadHooks>> {
    let indices = v0::GuestIndices::new(pre).ok()?;
    Some(Box::new(indices))
}

impl LoadHooks for v0::GuestIndices {
    fn load_export(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<Arc<dyn CallHooks>> {
        Ok(Arc::new(self.load(store, instance)?))
    }
}

impl CallHooks for v0::Guest {
    fn subscriptions<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
    ) -> BoxFuture<'a, wasmtime::Result<Vec<newest::Subscription>>> {
        let declared = self.call_subscriptions(store);
        Box::pin(declared.map(|declared| Ok(declared?.into_iter().map(subscription).collect())))
    }

    fn handle<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
        event: newest::HookEvent,
        payload: &'a String,
    ) -> Option<BoxFuture<'a, wasmtime::Result<newest::HookDecision>>> {
        let event = to_v0(event)?;
        let answer = self.call_handle(store, event, payload);
        Some(Box::pin(answer.map(|answer| answer.map(decision))))
    }
}

fn subscription(sub: v0::Subscription) -> newest::Subscription {
    newest::Subscription {
        event: from_v0(sub.event),
        matcher: sub.matcher,
        priority: sub.priority,
    }
}

/// A 0.1.0 decision, without the fields it did not have.
fn decision(decision: v0::HookDecision) -> newest::HookDecision {
    let action = match decision.action {
        v0::HookAction::Continue => newest::HookAction::Continue,
        v0::HookAction::Allow => newest::HookAction::Allow,
        v0::HookAction::Deny(reason) => newest::HookAction::Deny(reason),
        v0::HookAction::Ask(reason) => newest::HookAction::Ask(reason),
        v0::HookAction::Stop(reason) => newest::HookAction::Stop(reason),
    };
    newest::HookDecision {
        action,
        updated_input: decision.updated_input,
        updated_output: None,
        added_context: decision.added_context,
        system_message: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook_convert::{from_wit, to_wit};
    use kaizen_hooks::HookEvent;

    #[test]
    fn every_event_converts_both_ways_and_old_components_miss_the_new_ones() {
        let mut old = 0;
        for event in HookEvent::ALL {
            let wit = to_wit(event).expect("the newest contract names every event");
            assert_eq!(from_wit(wit), event);
            if let Some(wit) = to_v0(wit) {
                assert_eq!(from_wit(from_v0(wit)), event);
                old += 1;
            }
        }
        assert_eq!(old, 12);
        assert_eq!(to_wit(HookEvent::PermissionRequest).and_then(to_v0), None);
    }
}
