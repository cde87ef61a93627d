//! Hooks of the program driving the session: Claude's Agent SDKs' `hooks`
//! option, named in the SDK's handshake (`{"PreToolUse": [{"matcher":
//! "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30}]}`). When its
//! event comes, each is called over the program's control channel
//! (`hook_callback`) with the payload a command hook gets on stdin, and
//! its answer is read as a command hook's JSON output is: the same
//! decisions, with the same force, beside the configured hooks.

use crate::stream_control::Channel;
use kaizen_hooks::{Hook, HookEvent, HookFuture, Matcher, Priority, Subscription};
use serde_json::{Value, json};
use std::time::Duration;

/// One callback the handshake names.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackSpec {
    /// The event it handles.
    pub event: HookEvent,
    /// Which of the event's values (a tool's name), as Claude Code's
    /// matchers say it; empty for all.
    pub matcher: String,
    /// The program's id for the callback.
    pub callback_id: String,
    /// How long it may take; the dispatcher's default when `None`.
    pub timeout: Option<Duration>,
}

/// The callbacks of the handshake's `hooks`; an event Kaizen does not
/// have, or a matcher that does not parse, is an error (a hook the
/// program counts on must not be dropped without a word).
pub fn read_hooks(hooks: &Value) -> Result<Vec<CallbackSpec>, String> {
    let Some(events) = hooks.as_object() else {
        return Ok(Vec::new());
    };
    let mut specs = Vec::new();
    for (name, groups) in events {
        let event = HookEvent::from_name(name)
            .ok_or_else(|| format!("the program's hooks for `{name}`: Kaizen has no such event"))?;
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group["matcher"].as_str().unwrap_or_default().to_string();
            Matcher::parse(&matcher).map_err(|err| format!("the program's {name} hooks: {err}"))?;
            let timeout = group["timeout"]
                .as_f64()
                .filter(|secs| secs.is_finite() && *secs > 0.0)
                .map(Duration::from_secs_f64);
            for id in group["hookCallbackIds"].as_array().into_iter().flatten() {
                let Some(id) = id.as_str() else {
                    return Err(format!(
                        "the program's {name} hooks: a callback id is not text"
                    ));
                };
                specs.push(CallbackSpec {
                    event,
                    matcher: matcher.clone(),
                    callback_id: id.to_string(),
                    timeout,
                });
            }
        }
    }
    Ok(specs)
}

/// A callback in the program, as a hook.
pub struct CallbackHook {
    name: String,
    callback_id: String,
    subscriptions: Vec<Subscription>,
    timeout: Option<Duration>,
    channel: Channel,
}

impl CallbackHook {
    /// The hook that calls `spec`'s callback over `channel`.
    pub fn new(spec: CallbackSpec, channel: Channel) -> Result<Self, String> {
        let matcher = Matcher::parse(&spec.matcher)?;
        Ok(Self {
            name: format!("the program's callback `{}`", spec.callback_id),
            callback_id: spec.callback_id,
            subscriptions: vec![Subscription {
                event: spec.event,
                matcher,
                priority: Priority::NORMAL,
            }],
            timeout: spec.timeout,
            channel,
        })
    }
}

impl Hook for CallbackHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn subscriptions(&self) -> &[Subscription] {
        &self.subscriptions
    }

    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn handle<'a>(&'a self, event: HookEvent, payload: &'a Value) -> HookFuture<'a> {
        Box::pin(async move {
            let request = json!({
                "subtype": "hook_callback",
                "callback_id": self.callback_id,
                "input": payload,
                "tool_use_id": payload.get("tool_use_id"),
            });
            let response = self.channel.request(request).await?;
            if response["subtype"] == "error" {
                return Err(format!(
                    "failed in the program: {}",
                    response["error"].as_str().unwrap_or("no reason given")
                ));
            }
            // The answer is what a command hook would print.
            let output = response["response"].to_string();
            kaizen_claude::decision_from(event, Some(0), &output, "")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handshakes_hooks_are_read_or_refused() {
        let specs = read_hooks(&json!({
            "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 5}],
            "Stop": [{"matcher": null, "hookCallbackIds": ["hook_2"]}],
        }))
        .unwrap();
        assert_eq!(specs.len(), 3);
        let bash = specs.iter().find(|s| s.callback_id == "hook_1").unwrap();
        assert_eq!(bash.event, HookEvent::PreToolUse);
        assert_eq!(bash.matcher, "Bash");
        assert_eq!(bash.timeout, Some(Duration::from_secs(5)));
        let stop = specs.iter().find(|s| s.callback_id == "hook_2").unwrap();
        assert_eq!((stop.matcher.as_str(), stop.timeout), ("", None));
        assert!(read_hooks(&Value::Null).unwrap().is_empty());
        let unknown = read_hooks(&json!({"OnLunch": [{"hookCallbackIds": ["h"]}]})).unwrap_err();
        assert!(unknown.contains("OnLunch"), "{unknown}");
        let bad =
            read_hooks(&json!({"PreToolUse": [{"matcher": "Bash(", "hookCallbackIds": ["h"]}]}))
                .unwrap_err();
        assert!(bad.contains("Bash("), "{bad}");
    }
}
