//! A run's share of its session, for the result it ends with.

use crate::state::SessionState;
use kaizen_protocol::{DENIED, PermissionDenial, RUNTIME_NAME, RunResult, Status, TokensUsed};

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
