//! A tool call from the model on its way through the loop: as it came,
//! and as it finished (or was refused).

use kaizen_tools::{ToolError, ToolOutput};
use std::time::Duration;

/// A tool call from the model, waiting to run.
#[derive(Debug, Clone)]
pub(crate) struct PendingCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A finished (or refused) call.
pub(crate) struct CallOutcome {
    pub call: PendingCall,
    /// The input it ran with (after hooks), or the arguments as sent.
    pub input: serde_json::Value,
    pub result: Result<ToolOutput, ToolError>,
    pub duration: Duration,
    /// Refused by a rule, the mode, a hook or the user.
    pub denied: bool,
    /// What hooks added for the model, after the result.
    pub context: Vec<String>,
}

/// The arguments as JSON when they parse, else as the raw string.
pub(crate) fn arguments_value(raw: &str) -> serde_json::Value {
    serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.into()))
}
