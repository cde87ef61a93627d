//! Model completions as tools see them: a tool (a plugin granted `llm`)
//! asks for one by model role, and whoever runs the tool decides which
//! model answers, what it may cost and who is told. The tool only holds a
//! [`CompletionLink`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The model roles a completion may ask for; `main` is the session's own
/// model.
pub const MODEL_ROLES: &[&str] = &["main", "planner", "evaluator", "sub-agent", "compaction"];

/// One message of a completion's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// True for the assistant's turns, false for the user's.
    pub assistant: bool,
    /// The text.
    pub content: String,
}

/// A completion a tool asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    /// One of [`MODEL_ROLES`]; none means `main`.
    pub model_role: Option<String>,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<PromptMessage>,
    /// Output token cap, lowered to the session's.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
}

/// A finished completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The model's text.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Its price in USD, already counted in the session's budget.
    pub cost_usd: f64,
}

/// Why a completion did not run or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionError {
    /// The run's budget, or the caller's share of it, is spent.
    BudgetExceeded(String),
    /// Not allowed: a role not granted to the caller, an unknown role, or
    /// no model here.
    Refused(String),
    /// The provider failed after its retries.
    Provider(String),
    /// The run was interrupted or ran out of time.
    Cancelled(String),
}

impl fmt::Display for CompletionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BudgetExceeded(why) => write!(f, "budget exceeded: {why}"),
            Self::Refused(why) => write!(f, "refused: {why}"),
            Self::Provider(why) => write!(f, "the provider failed: {why}"),
            Self::Cancelled(why) => write!(f, "cancelled: {why}"),
        }
    }
}

/// The future a completion returns.
pub type CompletionFuture =
    Pin<Box<dyn Future<Output = Result<Completion, CompletionError>> + Send + 'static>>;

/// Runs completions for the calls of one session step.
pub trait Completions: Send + Sync {
    /// Runs `request` for `caller` (a plugin's name), within the tool call
    /// `call_id`.
    fn complete(&self, caller: &str, call_id: &str, request: CompletionRequest)
    -> CompletionFuture;
}

/// A tool call's way to its session's model; empty where there is none
/// (`kaizen tools call`).
#[derive(Clone, Default)]
pub struct CompletionLink(Option<Arc<dyn Completions>>);

impl CompletionLink {
    /// A link to `completions`.
    pub fn new(completions: Arc<dyn Completions>) -> Self {
        Self(Some(completions))
    }

    /// Runs `request` for `caller` within the call `call_id`.
    pub fn complete(
        &self,
        caller: &str,
        call_id: &str,
        request: CompletionRequest,
    ) -> CompletionFuture {
        match &self.0 {
            Some(completions) => completions.complete(caller, call_id, request),
            None => Box::pin(async {
                Err(CompletionError::Refused(
                    "no model is available here (`kaizen tools call` runs tools without a session model)"
                        .into(),
                ))
            }),
        }
    }
}

impl fmt::Debug for CompletionLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "CompletionLink(available)"
        } else {
            "CompletionLink(none)"
        })
    }
}
