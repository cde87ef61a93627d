//! Running one event's hooks: matching, ordering, timeouts, failures, and
//! combining decisions.

use kaizen_hooks::{Hook, HookAction, HookCall, HookDecision, HookEvent, Priority};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How long a hook may take when it names no timeout of its own (Claude
/// Code's default for command hooks).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The hooks of a session.
#[derive(Clone)]
pub struct HookDispatcher {
    hooks: Vec<Arc<dyn Hook>>,
    default_timeout: Duration,
}

impl Default for HookDispatcher {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl std::fmt::Debug for HookDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.hooks.iter().map(|hook| hook.name()).collect();
        f.debug_struct("HookDispatcher")
            .field("hooks", &names)
            .field("default_timeout", &self.default_timeout)
            .finish()
    }
}

/// What one hook did with one event, for the run's observers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookReport {
    /// The hook.
    pub hook: String,
    /// `continue`, `allow`, `deny`, `ask` or `stop`; `failed` when it gave
    /// no decision.
    pub outcome: String,
    /// Its reason, or what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The combined answer of an event's hooks.
#[derive(Debug, Clone, Default)]
pub struct Dispatch {
    /// The strongest action (stop, deny, ask, allow, continue); between
    /// equals, the first hook's. A required hook that failed counts as a
    /// denial with the failure as its reason.
    pub action: HookAction,
    /// The hook whose action that is.
    pub decided_by: Option<String>,
    /// The last replacement input (each hook sees the input as the hooks
    /// before it left it).
    pub updated_input: Option<Value>,
    /// The last replacement of the result's text.
    pub updated_output: Option<String>,
    /// Context for the model, in hook order.
    pub contexts: Vec<String>,
    /// Messages for the user, in hook order.
    pub messages: Vec<String>,
    /// Every hook that answered something or failed.
    pub reports: Vec<HookReport>,
}

impl Dispatch {
    fn take(&mut self, hook: &str, decision: HookDecision) {
        if decision.action.strength() > self.action.strength() {
            self.action = decision.action.clone();
            self.decided_by = Some(hook.to_string());
        }
        if decision.updated_input.is_some() {
            self.updated_input = decision.updated_input;
        }
        if decision.updated_output.is_some() {
            self.updated_output = decision.updated_output;
        }
        self.contexts.extend(decision.added_context);
        self.messages.extend(decision.system_message);
    }

    /// The context hooks added, as one text; `None` when there is none.
    pub fn context(&self) -> Option<String> {
        (!self.contexts.is_empty()).then(|| self.contexts.join("\n"))
    }
}

impl HookDispatcher {
    /// Dispatches to `hooks`, which are in load order.
    pub fn new(hooks: Vec<Arc<dyn Hook>>) -> Self {
        Self {
            hooks,
            default_timeout: DEFAULT_HOOK_TIMEOUT,
        }
    }

    /// Sets how long a hook without a timeout of its own may take.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// True when no hook is loaded.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// The hooks, in load order.
    pub fn hooks(&self) -> &[Arc<dyn Hook>] {
        &self.hooks
    }

    /// True when some hook subscribes to `event` (so the loop can skip
    /// building a payload nobody reads).
    pub fn wants(&self, event: HookEvent) -> bool {
        self.hooks
            .iter()
            .any(|hook| hook.subscriptions().iter().any(|sub| sub.event == event))
    }

    /// The hooks that handle `event` for `value` (the tool's name, for
    /// tool events), highest priority first and equals in load order.
    fn matching(&self, event: HookEvent, value: Option<&str>) -> Vec<&Arc<dyn Hook>> {
        let mut chosen: Vec<(Priority, usize, &Arc<dyn Hook>)> = Vec::new();
        for (index, hook) in self.hooks.iter().enumerate() {
            let best = hook
                .subscriptions()
                .iter()
                .filter(|sub| sub.event == event && sub.matcher.matches(value))
                .map(|sub| sub.priority)
                .max();
            if let Some(priority) = best {
                chosen.push((priority, index, hook));
            }
        }
        chosen.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        chosen.into_iter().map(|(_, _, hook)| hook).collect()
    }

    /// Runs the hooks of `event` one after another in priority order, each
    /// with its timeout, and combines their decisions. `value` is what
    /// matchers match (the tool's name for tool events). A hook that
    /// fails or times out gives no decision and is reported, unless it is
    /// required: then the event fails closed, as a denial naming it.
    pub async fn dispatch(
        &self,
        event: HookEvent,
        value: Option<&str>,
        payload: Value,
        call: &HookCall,
    ) -> Dispatch {
        let mut dispatch = Dispatch::default();
        let hooks = self.matching(event, value);
        if hooks.is_empty() {
            return dispatch;
        }
        let mut payload = payload;
        for hook in hooks {
            let limit = hook.timeout().unwrap_or(self.default_timeout);
            let answer =
                match tokio::time::timeout(limit, hook.handle_in(call, event, &payload)).await {
                    Ok(Ok(decision)) => Ok(decision),
                    Ok(Err(error)) => Err(error),
                    Err(_) => Err(format!(
                        "gave no answer within its time limit of {} s",
                        limit.as_secs_f64()
                    )),
                };
            match answer {
                Ok(decision) => {
                    if !decision.is_no_op() {
                        dispatch.reports.push(HookReport {
                            hook: hook.name().to_string(),
                            outcome: decision.action.kind().to_string(),
                            reason: decision.action.reason().map(str::to_string),
                        });
                    }
                    // Later hooks see the input and the result as this one
                    // left them (an audit log after a redaction sees the
                    // redacted text).
                    if let Some(object) = payload.as_object_mut() {
                        if let Some(input) = &decision.updated_input {
                            object.insert("tool_input".into(), input.clone());
                        }
                        if let Some(output) = &decision.updated_output {
                            if let Some(Value::Object(response)) = object.get_mut("tool_response") {
                                response.insert("content".into(), output.clone().into());
                            } else if object.contains_key("error") {
                                object.insert("error".into(), output.clone().into());
                            }
                        }
                    }
                    dispatch.take(hook.name(), decision);
                }
                Err(error) => {
                    tracing::warn!("hook {} failed on {event}: {error}", hook.name());
                    dispatch.reports.push(HookReport {
                        hook: hook.name().to_string(),
                        outcome: "failed".into(),
                        reason: Some(error.clone()),
                    });
                    if hook.required() {
                        let reason = format!(
                            "the required hook {} failed on {event} ({error}), so this was refused",
                            hook.name()
                        );
                        dispatch.take(hook.name(), HookDecision::action(HookAction::Deny(reason)));
                    }
                }
            }
        }
        dispatch
    }
}

#[cfg(test)]
mod tests;
