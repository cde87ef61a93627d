//! What a call brings to the store that serves it ([`CallSetup`]), and
//! what a call that fans out calls ([`FanOutTarget`]). A stateful instance
//! serves many calls: each sees its own directory, notes, links and
//! sandbox. Capabilities read both, so neither names the instances.

use futures::future::BoxFuture;
use kaizen_tools::{CallContext, CompletionLink, SessionNotes};
use std::sync::{Arc, Weak};

/// What one call brings to the store that serves it. What a call does not
/// bring (a hook's event has no tool call) stays as the store had it.
pub(crate) struct CallSetup<'a> {
    /// The tool call, for a call of one of the plugin's tools.
    pub tool: Option<&'a CallContext>,
    /// The plugin, when the call may fan out through `parallel` (a tool
    /// call not itself made that way).
    pub fan_out: Option<&'a Weak<dyn FanOutTarget>>,
    /// Where the call's completions go.
    pub completions: &'a CompletionLink,
    /// The session's notes, when the call brings them.
    pub notes: Option<&'a Arc<SessionNotes>>,
}

impl<'a> CallSetup<'a> {
    /// A call of a tool; `fan_out` when it may fan out.
    pub fn tool(ctx: &'a CallContext, fan_out: Option<&'a Weak<dyn FanOutTarget>>) -> Self {
        Self {
            tool: Some(ctx),
            fan_out,
            completions: &ctx.completions,
            notes: Some(&ctx.notes),
        }
    }

    /// An event for a hook.
    pub fn hook(completions: &'a CompletionLink) -> Self {
        Self {
            tool: None,
            fan_out: None,
            completions,
            notes: None,
        }
    }

    /// A call of a planner, with a copy of the session's notes.
    pub fn planner(completions: &'a CompletionLink, notes: &'a Arc<SessionNotes>) -> Self {
        Self {
            tool: None,
            fan_out: None,
            completions,
            notes: Some(notes),
        }
    }
}

/// What a call fans out to through `parallel`: its own plugin, whose tool
/// runs once per input, each call in a fresh instance that cannot fan out
/// again. The plugin's instances implement it.
pub(crate) trait FanOutTarget: Send + Sync {
    /// Calls tool `name` with `input` in a fresh instance: the output's
    /// text, or the error's message.
    fn call_alone<'a>(
        &'a self,
        ctx: &'a CallContext,
        name: &'a str,
        input: String,
    ) -> BoxFuture<'a, Result<String, String>>;
}
