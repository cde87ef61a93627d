//! Sub-agents as tools see them: a tool (such as `Task`) hands a task to a
//! fresh loop with its own conversation and a subset of the session's
//! tools, and gets back its final message. Whoever runs the tool decides
//! what a sub-agent is; the tool only holds a [`SubAgentLink`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a sub-agent is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgentRequest {
    /// A short (3-5 word) description, for displays.
    pub description: String,
    /// The whole task, as the sub-agent's first user message.
    pub prompt: String,
    /// The kind of sub-agent, which selects its tools and instructions.
    pub subagent_type: String,
}

/// How a sub-agent ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentReport {
    /// Its final message.
    pub output: String,
    /// How its loop ended: `complete`, `max_cycles`, `budget_exceeded`,
    /// `timeout`, `interrupted` or `error`.
    pub status: String,
    /// Why it ended early, when it did.
    pub error: Option<String>,
    /// Its model calls.
    pub cycles: u32,
    /// What it spent, in USD (already counted in the session's budget).
    pub cost_usd: f64,
    /// Its tool calls.
    pub tool_calls: u32,
}

/// The future a sub-agent run returns; the error says why it could not
/// start (an unknown type, no sub-agents here).
pub type SubAgentFuture =
    Pin<Box<dyn Future<Output = Result<SubAgentReport, String>> + Send + 'static>>;

/// Runs sub-agents for the calls of one session step.
pub trait SubAgents: Send + Sync {
    /// Runs `request` for the tool call `call_id` to its end.
    fn run(&self, call_id: &str, request: SubAgentRequest) -> SubAgentFuture;
}

/// A tool call's way to its session's sub-agents; empty where there are
/// none (a sub-agent's own calls, `kaizen tools call`).
#[derive(Clone, Default)]
pub struct SubAgentLink(Option<Arc<dyn SubAgents>>);

impl SubAgentLink {
    /// A link to `agents`.
    pub fn new(agents: Arc<dyn SubAgents>) -> Self {
        Self(Some(agents))
    }

    /// True when sub-agents can run from here.
    pub fn is_available(&self) -> bool {
        self.0.is_some()
    }

    /// Runs `request` for the call `call_id`.
    pub fn run(&self, call_id: &str, request: SubAgentRequest) -> SubAgentFuture {
        match &self.0 {
            Some(agents) => agents.run(call_id, request),
            None => Box::pin(async {
                Err(
                    "sub-agents are not available here: a sub-agent cannot start another one, \
                     and `kaizen tools call` has no model. Do the work with the other tools."
                        .to_string(),
                )
            }),
        }
    }
}

impl fmt::Debug for SubAgentLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SubAgentLink")
            .field(&if self.is_available() {
                "available"
            } else {
                "none"
            })
            .finish()
    }
}
