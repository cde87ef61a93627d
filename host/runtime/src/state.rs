//! The whole state of a session in one serializable structure, so durable
//! sessions can checkpoint and resume it.

use kaizen_llm::{Message, Usage};
/// What the session knows about a file it read or wrote, so a later write
/// can check that the file is unchanged since; shared with the tools.
pub use kaizen_tools::FileRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The model answered without calling tools.
    Complete,
    /// The cycle limit was reached.
    MaxCycles,
    /// The budget was spent.
    BudgetExceeded,
    /// The wall-clock limit was reached.
    Timeout,
    /// The run was interrupted.
    Interrupted,
    /// The provider failed (after retries) or the run could not go on.
    Error,
    /// A hook ended the session.
    Stopped,
}

impl Status {
    /// The process exit code the CLI contract gives this status.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Complete => 0,
            Self::Error | Self::Stopped => 1,
            Self::MaxCycles | Self::BudgetExceeded | Self::Timeout => 3,
            Self::Interrupted => 130,
        }
    }

    /// The status's name in results and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::MaxCycles => "max_cycles",
            Self::BudgetExceeded => "budget_exceeded",
            Self::Timeout => "timeout",
            Self::Interrupted => "interrupted",
            Self::Error => "error",
            Self::Stopped => "stopped",
        }
    }
}

/// The status of a tool call that was refused.
pub(crate) const DENIED: &str = "denied";

/// One tool call as it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The model's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: parsed JSON, or the raw text when it did not parse.
    pub arguments: serde_json::Value,
    /// `success`, `error`, or `denied` (refused by a permission rule, the
    /// mode, a hook or the user).
    pub status: String,
    /// How long the call took.
    pub duration_ms: u64,
    /// The error message, when it failed.
    pub error: Option<String>,
}

/// Everything a session is, serializable as one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    /// The session's id.
    pub session_id: String,
    /// The model in use.
    pub model: String,
    /// The conversation (the system prompt is rebuilt each call).
    pub messages: Vec<Message>,
    /// The todo list kept by `TodoWrite`.
    pub todos: Vec<serde_json::Value>,
    /// Tokens used so far.
    pub usage: Usage,
    /// Money spent so far, in USD.
    pub cost_usd: f64,
    /// Model calls made so far.
    pub cycles: u32,
    /// Files the tools read or wrote, by absolute path.
    pub read_files: BTreeMap<String, FileRecord>,
    /// Every tool call so far.
    pub tool_calls: Vec<ToolCallRecord>,
    /// How the last run ended, once it has.
    pub status: Option<Status>,
    /// How many times the conversation was compacted.
    #[serde(default)]
    pub compactions: u32,
}

impl SessionState {
    /// A fresh session.
    pub fn new(session_id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            model: model.into(),
            messages: Vec::new(),
            todos: Vec::new(),
            usage: Usage::default(),
            cost_usd: 0.0,
            cycles: 0,
            read_files: BTreeMap::new(),
            tool_calls: Vec::new(),
            status: None,
            compactions: 0,
        }
    }
}

/// A new session id: time-ordered and unique enough for a machine.
pub fn new_session_id() -> String {
    let now = chrono::Utc::now();
    let nanos = now.timestamp_subsec_nanos();
    format!(
        "{}-{:08x}{:04x}",
        now.format("%Y%m%d-%H%M%S"),
        nanos,
        std::process::id() & 0xffff
    )
}
