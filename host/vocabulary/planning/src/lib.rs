//! What a planner is to Kaizen, wherever it comes from.
//!
//! A [`Planner`] shapes the loop's THINK steps: before each model call it
//! may add to the system prompt, add user messages, set the todo list and
//! ask for several candidate responses ([`Planner::plan`]); it picks one
//! of the candidates ([`Planner::select`]); and when a response has no
//! tool calls it may ask for a bounded revision ([`Planner::verify`]). It
//! never ends a run: the loop does, when a response has no tool calls.
//!
//! The loop drives a planner through this trait and knows nothing of where
//! it comes from (a WebAssembly component, a test). Each call gets a
//! [`PlannerCall`]: the run's [`CompletionLink`], through which a planner
//! asks the session's model, charged to the run.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

use kaizen_tools::{CompletionLink, SessionNotes};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a planner sees before a model call.
#[derive(Debug, Clone, PartialEq)]
pub struct ThinkContext {
    /// The session's id.
    pub session_id: String,
    /// 1-based number of the coming model call.
    pub cycle: u32,
    /// The run's task: its first user message.
    pub task: String,
    /// The conversation so far, as a JSON array of messages.
    pub transcript: serde_json::Value,
    /// Names of the tools the model may call.
    pub tools: Vec<String>,
    /// The planner's settings from the operator's config (a JSON object).
    pub settings: serde_json::Value,
}

/// How to run the coming model call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThinkPlan {
    /// Text appended to the system prompt for this call only.
    pub system_additions: Vec<String>,
    /// User messages added to the conversation before the call.
    pub injected: Vec<String>,
    /// How many candidate responses to ask for (0 and 1: one).
    pub candidates: u32,
    /// A new todo list for the session, as `TodoWrite` takes it.
    pub todos: Option<serde_json::Value>,
}

impl ThinkPlan {
    /// True when the plan changes nothing about the call.
    pub fn is_plain(&self) -> bool {
        self.system_additions.is_empty()
            && self.injected.is_empty()
            && self.candidates <= 1
            && self.todos.is_none()
    }
}

/// What to do with a final answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The answer stands.
    Accept,
    /// One more turn, with this user message first.
    Revise(String),
}

/// What each planner call gets from the loop.
#[derive(Debug, Clone, Default)]
pub struct PlannerCall {
    /// The run's model, for the planner's completions.
    pub completions: CompletionLink,
    /// A copy of the session's notes (the todo list, files read): a
    /// planner reads them; it sets the todo list through its plan.
    pub notes: Arc<SessionNotes>,
}

/// The future of a planner call; the error says what went wrong (a trap,
/// a time limit, a bad answer).
pub type PlannerFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;

/// A planning strategy.
pub trait Planner: Send + Sync {
    /// The planner's name, for reports.
    fn name(&self) -> &str;

    /// Before each model call.
    fn plan<'a>(&'a self, call: PlannerCall, ctx: &'a ThinkContext)
    -> PlannerFuture<'a, ThinkPlan>;

    /// Picks one of `candidates` (JSON assistant messages); its index.
    fn select<'a>(
        &'a self,
        call: PlannerCall,
        ctx: &'a ThinkContext,
        candidates: &'a [serde_json::Value],
    ) -> PlannerFuture<'a, u32>;

    /// On a response without tool calls.
    fn verify<'a>(
        &'a self,
        call: PlannerCall,
        ctx: &'a ThinkContext,
        answer: &'a str,
    ) -> PlannerFuture<'a, Verdict>;

    /// Releases what the planner keeps for `session` (its instance).
    fn end_session(&self, _session: &str) {}
}
