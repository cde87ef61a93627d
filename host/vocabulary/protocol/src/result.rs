//! The result object of a run, as `--output-format json` prints it.

use serde::{Deserialize, Serialize};

/// The runtime's name in results.
pub const RUNTIME_NAME: &str = "kaizen";

/// Token counts in the result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokensUsed {
    /// All input tokens, cached or not.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Their sum.
    pub total: u64,
}

/// What a run ended with (the CLI contract's JSON object).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The final assistant text.
    pub output: String,
    /// How it ended.
    pub status: Status,
    /// Model calls made in this run.
    pub cycles_used: u32,
    /// Tokens used in this run.
    pub tokens_used: TokensUsed,
    /// Money spent in this run, in USD.
    pub cost_usd: f64,
    /// Wall-clock duration.
    pub duration_ms: u64,
    /// The session's id.
    pub session_id: String,
    /// The model that answered.
    pub model_used: String,
    /// The runtime that ran the task: `kaizen` for this loop, or an
    /// external one's name (`claude-code`, `codex`, `gemini-cli`).
    pub runtime_name: String,
    /// The tool calls of this run, in order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Why the run ended early, for statuses other than `complete`.
    pub error_message: Option<String>,
    /// The tool calls that were refused (by a rule, the mode, a hook or
    /// the user), as Claude Code reports them.
    #[serde(default)]
    pub permission_denials: Vec<PermissionDenial>,
    /// How many times this run compacted the conversation.
    #[serde(default)]
    pub compactions: u32,
    /// Whether `cost_usd` was computed here, from the tokens and the price
    /// table, because the runtime that ran the task reports no cost.
    #[serde(default)]
    pub cost_estimated: bool,
    /// Which runtime ran the task and why, when one was asked for
    /// (`--runtime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_selection: Option<RuntimeSelection>,
}

/// How the runtime of a run was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeSelection {
    /// What was asked for: a runtime's name, or `auto`.
    pub requested: String,
    /// The runtime that ran the task.
    pub chosen: String,
    /// Why it was chosen.
    pub reason: String,
    /// The runtimes tried before it, in order, and why each was passed over.
    #[serde(default)]
    pub passed_over: Vec<PassedOver>,
}

/// A runtime the selector tried or considered and did not use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassedOver {
    /// The runtime.
    pub runtime: String,
    /// Why it did not run the task.
    pub why: String,
}

/// A refused tool call in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    /// The tool.
    pub tool_name: String,
    /// The call's id.
    pub tool_use_id: String,
    /// Its input.
    pub tool_input: serde_json::Value,
}

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
pub const DENIED: &str = "denied";

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
