//! Completions from the session's model, for a plugin whose manifest
//! requests `llm = true` (and whose operator grants it).
//!
//! A plugin asks for a model *role* (`main`, `planner`, `evaluator`,
//! `sub-agent`, `compaction`), never a model: the operator's config says
//! which model plays each role, which roles the plugin may use and how much
//! of the run's budget its completions may spend. Every completion counts
//! in the session's tokens and cost; the provider's key never reaches the
//! plugin.
//!
//! ```no_run
//! use kaizen_sdk::llm;
//!
//! let answer = llm::ask("evaluator", Some("Answer yes or no."), "Is 7 prime?")?;
//! let yes = answer.text.trim().eq_ignore_ascii_case("yes");
//! # Ok::<(), kaizen_sdk::ToolError>(())
//! ```

use crate::ToolError;

pub use crate::bindings::kaizen::plugin::llm::{Completion, CompletionRequest, LlmError, Message};

/// Runs `request` on the model playing its role.
pub fn complete(request: &CompletionRequest) -> Result<Completion, LlmError> {
    crate::bindings::kaizen::plugin::llm::complete(request)
}

/// One question as a single user message, on the model playing `role`.
pub fn ask(role: &str, system: Option<&str>, prompt: &str) -> Result<Completion, LlmError> {
    complete(&CompletionRequest {
        model_role: Some(role.to_string()),
        system: system.map(str::to_string),
        messages: vec![Message {
            role: "user".into(),
            content: prompt.to_string(),
        }],
        max_tokens: None,
        temperature: None,
    })
}

/// What went wrong, in words for the model.
pub fn describe(err: &LlmError) -> String {
    match err {
        LlmError::BudgetExceeded(why) => format!("the completion's budget is spent: {why}"),
        LlmError::Refused(why) => format!("the completion was refused: {why}"),
        LlmError::Provider(why) => format!("the model provider failed: {why}"),
        LlmError::Cancelled(why) => format!("the completion was cancelled: {why}"),
    }
}

/// A failed completion fails the tool call, saying why.
impl From<LlmError> for ToolError {
    fn from(err: LlmError) -> Self {
        let message = describe(&err);
        match err {
            LlmError::Cancelled(_) => ToolError::timeout(message),
            LlmError::Refused(_) => ToolError::permission_denied(message),
            _ => ToolError::failed(message),
        }
    }
}
