//! The points in a session where hooks run.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A point in a session where hooks run. Serialized (and matched in
/// configuration) by Claude Code's names where Claude Code has the event
/// (`PreToolUse`, `UserPromptSubmit`, ...), and by names in the same style
/// for Kaizen's own (`PreThink`, `PreCheckpoint`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    /// A run starts (a new session, or one resumed or forked).
    SessionStart,
    /// A run ends, whatever its status.
    SessionEnd,
    /// The user's prompt is about to reach the model; a hook may refuse
    /// it or add context.
    UserPromptSubmit,
    /// Before a model call (THINK).
    PreThink,
    /// After a model call, before its tool calls run.
    PostThink,
    /// Before a tool runs; a hook may allow, refuse or ask, and rewrite the
    /// input.
    PreToolUse,
    /// After a tool succeeded; a hook may add context or replace what the
    /// model sees.
    PostToolUse,
    /// After a tool failed (or was refused).
    PostToolUseFailure,
    /// The model answered without calling tools and the run is about to
    /// end; a hook may refuse the stop, so the loop goes on with its reason.
    Stop,
    /// A sub-agent starts.
    SubagentStart,
    /// A sub-agent is about to end (as [`HookEvent::Stop`], for it).
    SubagentStop,
    /// Before the conversation is compacted.
    PreCompact,
    /// Before a checkpoint of the session is written.
    PreCheckpoint,
    /// After a checkpoint of the session was written.
    PostCheckpoint,
    /// The run was interrupted (Ctrl-C, SIGTERM, an embedder's cancel).
    Interrupt,
    /// A tool call needs the user's approval; a hook may give or refuse
    /// it in the user's place.
    PermissionRequest,
    /// Kaizen tells the user something (a question waits, a warning).
    Notification,
}

impl HookEvent {
    /// Every event, in the order of a session.
    pub const ALL: [HookEvent; 17] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreThink,
        HookEvent::PostThink,
        HookEvent::PermissionRequest,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::Notification,
        HookEvent::PreCompact,
        HookEvent::PreCheckpoint,
        HookEvent::PostCheckpoint,
        HookEvent::Interrupt,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// The name used in payloads (`hook_event_name`) and configuration.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreThink => "PreThink",
            HookEvent::PostThink => "PostThink",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PreCheckpoint => "PreCheckpoint",
            HookEvent::PostCheckpoint => "PostCheckpoint",
            HookEvent::Interrupt => "Interrupt",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::Notification => "Notification",
        }
    }

    /// The event named `name` (as [`HookEvent::name`] spells it).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
    }

    /// True for the events about one tool call, whose matchers match the
    /// tool's name.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionRequest
        )
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for event in HookEvent::ALL {
            assert!(seen.insert(event.name()), "{event} twice");
            assert_eq!(HookEvent::from_name(event.name()), Some(event));
            let json = serde_json::to_string(&event).unwrap();
            assert_eq!(json, format!("\"{}\"", event.name()));
        }
        assert_eq!(HookEvent::from_name("pretooluse"), None);
    }
}
