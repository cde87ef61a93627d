//! The result object of a run, as `--output-format json` prints it.

use crate::state::{DENIED, SessionState, Status, ToolCallRecord};
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

/// Where a run started, to report only its own share of a session.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunStart {
    pub cycles: u32,
    pub input: u64,
    pub output: u64,
    pub cost: f64,
    pub tool_calls: usize,
    pub compactions: u32,
}

impl RunStart {
    pub fn of(state: &SessionState) -> Self {
        Self {
            cycles: state.cycles,
            input: state.usage.total_input(),
            output: state.usage.output_tokens,
            cost: state.cost_usd,
            tool_calls: state.tool_calls.len(),
            compactions: state.compactions,
        }
    }

    pub fn result(
        &self,
        state: &SessionState,
        status: Status,
        output: String,
        model_used: String,
        error_message: Option<String>,
        duration_ms: u64,
    ) -> RunResult {
        let input = state.usage.total_input() - self.input;
        let output_tokens = state.usage.output_tokens - self.output;
        RunResult {
            output,
            status,
            cycles_used: state.cycles - self.cycles,
            tokens_used: TokensUsed {
                input,
                output: output_tokens,
                total: input + output_tokens,
            },
            cost_usd: state.cost_usd - self.cost,
            duration_ms,
            session_id: state.session_id.clone(),
            model_used,
            runtime_name: RUNTIME_NAME.to_string(),
            tool_calls: state.tool_calls[self.tool_calls..].to_vec(),
            error_message,
            permission_denials: state.tool_calls[self.tool_calls..]
                .iter()
                .filter(|call| call.status == DENIED)
                .map(|call| PermissionDenial {
                    tool_name: call.name.clone(),
                    tool_use_id: call.id.clone(),
                    tool_input: call.arguments.clone(),
                })
                .collect(),
            compactions: state.compactions - self.compactions,
            cost_estimated: false,
            runtime_selection: None,
        }
    }
}
