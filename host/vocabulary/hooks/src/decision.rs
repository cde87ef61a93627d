//! What a hook answers, and how the answers of several hooks combine.

use serde::{Deserialize, Serialize};

/// What a hook wants done. Several hooks' actions combine strongest first:
/// stop, deny, ask, allow, continue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", content = "reason", rename_all = "snake_case")]
pub enum HookAction {
    /// No opinion; carry on.
    #[default]
    Continue,
    /// Let the tool call run without asking the user.
    Allow,
    /// Refuse: the tool call, the prompt, or (for `Stop`) the run's end;
    /// the reason goes to the model.
    Deny(String),
    /// Ask the user before the tool call runs; the text says why.
    Ask(String),
    /// End the session; the reason is reported to the user.
    Stop(String),
}

impl HookAction {
    /// How strong the action is when several hooks answer: the strongest
    /// wins, and between equals the one that ran first.
    pub fn strength(&self) -> u8 {
        match self {
            HookAction::Continue => 0,
            HookAction::Allow => 1,
            HookAction::Ask(_) => 2,
            HookAction::Deny(_) => 3,
            HookAction::Stop(_) => 4,
        }
    }

    /// The reason, for the actions that carry one.
    pub fn reason(&self) -> Option<&str> {
        match self {
            HookAction::Deny(reason) | HookAction::Ask(reason) | HookAction::Stop(reason) => {
                Some(reason)
            }
            HookAction::Continue | HookAction::Allow => None,
        }
    }

    /// A short name: `continue`, `allow`, `deny`, `ask`, `stop`.
    pub fn kind(&self) -> &'static str {
        match self {
            HookAction::Continue => "continue",
            HookAction::Allow => "allow",
            HookAction::Deny(_) => "deny",
            HookAction::Ask(_) => "ask",
            HookAction::Stop(_) => "stop",
        }
    }
}

/// One hook's answer to one event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookDecision {
    /// What to do.
    pub action: HookAction,
    /// For `PreToolUse`: a replacement tool input, checked against the
    /// tool's schema again before the tool runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<serde_json::Value>,
    /// For `PostToolUse`: a replacement for the text the model sees of the
    /// result (a redaction, a summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_output: Option<String>,
    /// Text added to the model's context with the event's result (the
    /// tool's result, the prompt, the start of the session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_context: Option<String>,
    /// A message for the user (on stderr and in the streamed output), not the
    /// model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
}

impl HookDecision {
    /// A decision with only an action.
    pub fn action(action: HookAction) -> Self {
        Self {
            action,
            ..Self::default()
        }
    }

    /// True when the decision changes nothing.
    pub fn is_no_op(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strength_orders_stop_deny_ask_allow_continue() {
        let order = [
            HookAction::Continue,
            HookAction::Allow,
            HookAction::Ask("a".into()),
            HookAction::Deny("d".into()),
            HookAction::Stop("s".into()),
        ];
        for pair in order.windows(2) {
            assert!(pair[0].strength() < pair[1].strength(), "{pair:?}");
        }
    }

    #[test]
    fn decisions_serialize_compactly() {
        let decision = HookDecision {
            action: HookAction::Deny("no".into()),
            added_context: Some("ctx".into()),
            ..HookDecision::default()
        };
        let json = serde_json::to_value(&decision).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"action": {"action": "deny", "reason": "no"}, "added_context": "ctx"})
        );
        assert!(HookDecision::default().is_no_op());
        assert!(!decision.is_no_op());
    }
}
