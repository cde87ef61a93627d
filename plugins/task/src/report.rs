//! What the model reads when a sub-agent ends or cannot start.

use kaizen_sdk::prelude::*;

/// How a sub-agent ended, as the host reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    pub output: String,
    pub status: String,
    pub error: Option<String>,
    pub cycles: u32,
    pub cost_usd: f64,
    pub tool_calls: u32,
}

/// The result for a sub-agent that ran: its final message, and a note
/// when it stopped before finishing.
pub fn ended(ending: &Ending) -> Output {
    let mut text = if ending.output.trim().is_empty() {
        "(The sub-agent ended without a final message.)".to_string()
    } else {
        ending.output.clone()
    };
    if ending.status != "complete" {
        let why = ending.error.as_deref().unwrap_or("no reason given");
        text.push_str(&format!(
            "\n\n[The sub-agent stopped before finishing ({}: {why}) after {} model calls and {} tool calls. \
             The text above is its last message, which may be partial: finish the work yourself or start a \
             sub-agent with a narrower task.]",
            ending.status, ending.cycles, ending.tool_calls
        ));
    }
    Output::text(text).with_metadata(json!({
        "status": ending.status,
        "error": ending.error,
        "cycles": ending.cycles,
        "cost_usd": ending.cost_usd,
        "tool_calls": ending.tool_calls,
    }))
}

/// The error for a sub-agent that could not start.
pub fn refused(why: String) -> ToolError {
    ToolError::invalid_input(format!("No sub-agent was started: {why}."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_sdk::ErrorKind;

    fn ending(status: &str, output: &str) -> Ending {
        Ending {
            output: output.into(),
            status: status.into(),
            error: (status != "complete").then(|| "reached the limit of 3 cycles".into()),
            cycles: 3,
            cost_usd: 0.25,
            tool_calls: 4,
        }
    }

    fn text(output: &Output) -> String {
        format!("{output:?}")
    }

    #[test]
    fn a_complete_run_returns_its_message_alone() {
        let out = ended(&ending("complete", "Found it in src/lib.rs:12."));
        let shown = text(&out);
        assert!(shown.contains("Found it in src/lib.rs:12."), "{shown}");
        assert!(!shown.contains("stopped before finishing"), "{shown}");
    }

    #[test]
    fn an_early_end_says_why_and_what_to_do() {
        let shown = text(&ended(&ending("max_cycles", "Half way")));
        assert!(shown.contains("Half way"), "{shown}");
        assert!(
            shown.contains("max_cycles: reached the limit of 3 cycles"),
            "{shown}"
        );
        assert!(
            shown.contains("after 3 model calls and 4 tool calls"),
            "{shown}"
        );
    }

    #[test]
    fn an_empty_message_is_named() {
        let shown = text(&ended(&ending("complete", "  ")));
        assert!(shown.contains("without a final message"), "{shown}");
    }

    #[test]
    fn a_refusal_is_invalid_input_with_the_reason() {
        let err = refused("there is no sub-agent type `x`".into());
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("type `x`"), "{}", err.message());
    }
}
