//! `ask`: the built-in `AskUserQuestion` tool, which puts multiple-choice
//! questions to the person running the session, the way Claude Code's tool
//! of the same name does.
//!
//! The questions go through the host's `interaction` import; who answers is
//! the embedder's business (a terminal prompt in `kaizen run`, nobody in a
//! script or CI). Every way of not getting an answer is a result the model
//! can act on, never a trap: no user (decide alone and say what was
//! assumed), declined (do not ask again), invalid (fix the questions).
//!
//! Checking and formatting are plain Rust, tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml -p kaizen-builtin-ask`.

mod format;

use kaizen_sdk::host::interaction::{self, Choice, InteractionError, Question};
use kaizen_sdk::prelude::*;

/// Input of `AskUserQuestion`, shaped as Claude Code's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct AskInput {
    /// Questions to ask the user (1-4 questions).
    #[schemars(length(min = 1, max = 4))]
    questions: Vec<QuestionInput>,
}

/// One question of the input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "camelCase")]
struct QuestionInput {
    /// The complete question to ask the user. It should be clear and specific and end with a question mark, e.g. "Which library should we use for date formatting?". With multiSelect, phrase it accordingly, e.g. "Which features do you want to enable?".
    #[schemars(length(min = 1))]
    question: String,
    /// A very short label for the question, shown as a tag (at most 12 characters), e.g. "Auth method", "Library", "Approach".
    #[schemars(length(min = 1, max = 12))]
    header: String,
    /// The choices offered (2-4 options). Each should be a distinct, mutually exclusive choice unless multiSelect is true. Do not add an "Other" option: the user can always type their own answer.
    #[schemars(length(min = 2, max = 4))]
    options: Vec<OptionInput>,
    /// True to let the user choose several options instead of exactly one. Use it when the choices are not mutually exclusive.
    #[serde(default)]
    multi_select: bool,
}

/// One choice of a question.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct OptionInput {
    /// The text the user sees and selects: concise, 1-5 words.
    #[schemars(length(min = 1))]
    label: String,
    /// What this option means or what will happen if it is chosen, with any trade-offs.
    description: String,
}

/// The `AskUserQuestion` tool.
struct AskUserQuestion;

impl Tool for AskUserQuestion {
    const NAME: &'static str = "AskUserQuestion";
    const DESCRIPTION: &'static str = "\
Asks the user multiple-choice questions while you work and waits for the answers. Use it to:
1. gather the user's preferences or requirements;
2. clear up ambiguous instructions;
3. get decisions on implementation choices as you go;
4. offer choices about which direction to take.

Usage notes:
- Ask 1-4 questions at once, each with 2-4 options. Keep labels short (1-5 words) and put \
details in each option's description.
- The user can always type their own answer instead of picking an option, so never add an \
\"Other\" option.
- Set multiSelect to true when several options can apply together.
- If you recommend an option, make it the first one and end its label with \"(Recommended)\".
- When the run has no user (a script, CI, a sub-agent), the result says so: then decide on \
your own best judgement, and state the assumptions you made.";
    // Asking changes nothing, so it may run beside other read-only tools;
    // the host serializes the prompts themselves.
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = AskInput;

    fn call(_ctx: &CallContext, input: AskInput) -> Result<Output, ToolError> {
        let questions = to_questions(input);
        format::check(&questions).map_err(ToolError::invalid_input)?;
        match interaction::ask(&questions) {
            Ok(answers) => Ok(format::answered(&questions, &answers)),
            Err(InteractionError::NoUser) => Ok(format::no_user(&questions)),
            Err(InteractionError::Declined) => Ok(format::declined()),
            Err(InteractionError::Invalid(why)) => Err(ToolError::invalid_input(format!(
                "The questions were refused: {why}. Fix them and call AskUserQuestion again."
            ))),
        }
    }
}

export_tools!(AskUserQuestion);

/// The input as the contract's records.
fn to_questions(input: AskInput) -> Vec<Question> {
    input
        .questions
        .into_iter()
        .map(|q| Question {
            question: q.question,
            header: q.header,
            options: q
                .options
                .into_iter()
                .map(|o| Choice {
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            multi_select: q.multi_select,
        })
        .collect()
}

#[cfg(test)]
mod tests;
