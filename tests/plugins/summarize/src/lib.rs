//! `summarize`: a tool that asks the session's model for a completion
//! through the contract's `llm` import.

use kaizen_sdk::llm;
use kaizen_sdk::prelude::*;

/// Input of `Summarize`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct SummarizeInput {
    /// The text to summarize.
    text: String,
    /// The model role to ask (default `evaluator`).
    role: Option<String>,
}

struct Summarize;

impl Tool for Summarize {
    const NAME: &'static str = "Summarize";
    const DESCRIPTION: &'static str = "Summarizes a text in one sentence, with a model call.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = SummarizeInput;

    fn call(_ctx: &CallContext, input: SummarizeInput) -> Result<Output, ToolError> {
        let role = input.role.as_deref().unwrap_or("evaluator");
        let done = llm::ask(
            role,
            Some("Summarize the text in one sentence."),
            &input.text,
        )?;
        Ok(Output::from(done.text).with_metadata(json!({
            "model": done.model,
            "input_tokens": done.input_tokens,
            "output_tokens": done.output_tokens,
            "cost_usd": done.cost_usd,
        })))
    }
}

export_tools!(Summarize);
