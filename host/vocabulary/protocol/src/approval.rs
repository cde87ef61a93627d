//! Asking the user about a tool call.

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// A tool call waiting for the user's word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// Its input, after hooks.
    pub input: serde_json::Value,
    /// Why it needs approval (the rule, the mode, a hook).
    pub reason: String,
    /// The rule that "allow always" would add (`Bash(npm test)`).
    pub always_rule: String,
    /// How much harm the tool can do, for the prompt to show (absent in
    /// requests journaled before levels were shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub danger: Option<crate::Danger>,
    /// The sub-agent making the call, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model's id for the call (empty where there is no model call,
    /// as for a tool called over MCP).
    #[serde(default)]
    pub call_id: String,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run this call.
    Once,
    /// Run this call, and from now on every call the request's
    /// `always_rule` matches (the approver keeps the rule where it lasts).
    Always,
    /// Refuse it; the text (possibly empty) goes to the model.
    Deny(String),
    /// Run the call with this input instead (the approver edited it); it
    /// must still fit the tool's schema, and the deny rules judge it as
    /// they judged the model's.
    Edited(serde_json::Value),
}

/// The future an approver returns.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;

/// Whoever can approve tool calls: a person at a terminal, an embedder's
/// UI. Without one, a call that asks is refused.
pub trait Approver: Send + Sync {
    /// Asks about `request`; one question at a time.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a>;
}
