//! What a hook is to Kaizen, wherever it comes from.
//!
//! A hook watches a session's events (a prompt, a model call, a tool call
//! and its result, the end of the run, ...) and may decide: let a tool call
//! run without asking, refuse it, ask the user, rewrite its input, add
//! context for the model, or stop the session. Hooks come from WebAssembly
//! components, from Claude Code's command hooks, or from tests; the loop
//! sees only the [`Hook`] trait, so it knows hooks and not where they come
//! from. Payloads are JSON objects with Claude Code's field names, so one
//! payload serves components and command hooks alike.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod decision;
mod event;
mod hook;

pub use decision::{HookAction, HookDecision};
pub use event::HookEvent;
pub use hook::{Hook, HookCall, HookFuture, Matcher, Priority, Subscription};
