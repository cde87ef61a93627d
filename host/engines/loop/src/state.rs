//! The whole state of a session in one serializable structure, so durable
//! sessions can checkpoint and resume it.

use kaizen_llm::{Message, Usage};
use kaizen_protocol::{Status, ToolCallRecord};
/// What the session knows about a file it read or wrote, so a later write
/// can check that the file is unchanged since; shared with the tools.
pub use kaizen_tools::FileRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// The skill whose `allowed-tools` narrow what the loop admits, until
    /// the next task (see `kaizen_tools::ActiveSkill`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_skill: Option<kaizen_tools::ActiveSkill>,
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
            active_skill: None,
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
