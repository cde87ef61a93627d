//! The trait every hook source implements, and what a hook subscribes to.

use crate::decision::HookDecision;
use crate::event::HookEvent;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// The future a hook's `handle` returns: its decision, or why it failed.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<HookDecision, String>> + Send + 'a>>;

/// The order hooks of one event run in: higher first, and equal ones in
/// the order they were loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub i32);

impl Priority {
    /// Hooks that must see and decide first (a security policy).
    pub const CRITICAL: Priority = Priority(300);
    /// Before most hooks.
    pub const HIGH: Priority = Priority(200);
    /// The default.
    pub const NORMAL: Priority = Priority(100);
    /// After the others (an audit log that records their decisions).
    pub const LOW: Priority = Priority(0);

    /// `CRITICAL`, `HIGH`, `NORMAL`, `LOW` (any case), or a number.
    pub fn parse(text: &str) -> Option<Priority> {
        match text.trim().to_ascii_uppercase().as_str() {
            "CRITICAL" => Some(Priority::CRITICAL),
            "HIGH" => Some(Priority::HIGH),
            "NORMAL" => Some(Priority::NORMAL),
            "LOW" => Some(Priority::LOW),
            other => other.parse().ok().map(Priority),
        }
    }
}

impl Default for Priority {
    fn default() -> Self {
        Priority::NORMAL
    }
}

/// Which values of an event a subscription wants: for tool events the
/// tool's name, for others what Claude Code matches there (the session's
/// source, the agent's type, the notification's kind). Claude Code's
/// syntax: empty or `*` matches everything; names joined by `|`
/// (`Edit|Write`) match exactly; anything else is a regular expression
/// (`mcp__github__.*`, `Notebook.*`), searched anywhere in the value.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Every value.
    Any,
    /// Exactly one of these.
    Names(Vec<String>),
    /// Values the expression finds a match in.
    Regex(regex::Regex),
}

impl Matcher {
    /// Parses Claude Code's matcher syntax; an invalid expression is an
    /// error naming it.
    pub fn parse(text: &str) -> Result<Matcher, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::Any);
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '|';
        if text.chars().all(plain) {
            return Ok(Matcher::Names(
                text.split('|')
                    .filter(|name| !name.is_empty())
                    .map(str::to_string)
                    .collect(),
            ));
        }
        regex::Regex::new(text)
            .map(Matcher::Regex)
            .map_err(|err| format!("the matcher `{text}` is not a valid regular expression: {err}"))
    }

    /// True when `value` is matched. A subscription with a matcher never
    /// matches an event that has no value to match.
    pub fn matches(&self, value: Option<&str>) -> bool {
        match (self, value) {
            (Matcher::Any, _) => true,
            (_, None) => false,
            (Matcher::Names(names), Some(value)) => names.iter().any(|name| name == value),
            (Matcher::Regex(regex), Some(value)) => regex.is_match(value),
        }
    }
}

/// One event a hook wants, with a matcher and a priority.
#[derive(Debug, Clone)]
pub struct Subscription {
    /// The event.
    pub event: HookEvent,
    /// Which of its values (see [`Matcher`]).
    pub matcher: Matcher,
    /// Where the hook runs among the event's hooks.
    pub priority: Priority,
}

impl Subscription {
    /// Every `event`, at normal priority.
    pub fn all(event: HookEvent) -> Self {
        Self {
            event,
            matcher: Matcher::Any,
            priority: Priority::NORMAL,
        }
    }
}

/// A hook, wherever it comes from (a component, a command, a test).
pub trait Hook: Send + Sync {
    /// Who the hook is, for messages and logs (`plugin audit`,
    /// `command "~/.claude/hooks/guard.sh" (~/.claude/settings.json)`).
    fn name(&self) -> &str;

    /// The events it handles.
    fn subscriptions(&self) -> &[Subscription];

    /// A required hook that fails or times out fails its event closed (the
    /// tool call is refused, the prompt refused); any other is logged and
    /// skipped.
    fn required(&self) -> bool {
        false
    }

    /// How long one call may take; `None` leaves it to the dispatcher's
    /// default.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Handles one event. `payload` is the event's JSON object (see the
    /// project's docs/hooks.md for each event's fields).
    fn handle<'a>(&'a self, event: HookEvent, payload: &'a serde_json::Value) -> HookFuture<'a>;

    /// [`Hook::handle`] with what the event's context offers (the session's
    /// model); a hook that uses nothing of it keeps the default.
    fn handle_in<'a>(
        &'a self,
        _call: &HookCall,
        event: HookEvent,
        payload: &'a serde_json::Value,
    ) -> HookFuture<'a> {
        self.handle(event, payload)
    }
}

/// What a hook call may use besides its payload.
#[derive(Debug, Clone, Default)]
pub struct HookCall {
    /// The session's model, for completions, served by the run while the
    /// event's hooks work (empty where no run serves it, as in tests).
    pub completions: kaizen_tools::CompletionLink,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_follow_claude_code() {
        let any = Matcher::parse("").unwrap();
        assert!(any.matches(Some("Bash")) && any.matches(None));
        assert!(Matcher::parse("*").unwrap().matches(Some("Read")));
        let names = Matcher::parse("Edit|Write").unwrap();
        assert!(names.matches(Some("Edit")) && names.matches(Some("Write")));
        assert!(!names.matches(Some("MultiEdit")), "names match exactly");
        assert!(!names.matches(None));
        let regex = Matcher::parse("mcp__github__.*").unwrap();
        assert!(regex.matches(Some("mcp__github__create_issue")));
        assert!(!regex.matches(Some("mcp__gitlab__x")));
        let err = Matcher::parse("Bash(").unwrap_err();
        assert!(err.contains("Bash("), "{err}");
    }

    #[test]
    fn priorities_parse_by_name_or_number() {
        assert_eq!(Priority::parse("critical"), Some(Priority::CRITICAL));
        assert_eq!(Priority::parse("LOW"), Some(Priority::LOW));
        assert_eq!(Priority::parse("150"), Some(Priority(150)));
        assert_eq!(Priority::parse("urgent"), None);
        assert!(Priority::CRITICAL > Priority::HIGH && Priority::NORMAL > Priority::LOW);
    }
}
