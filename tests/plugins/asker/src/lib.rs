//! `asker`: asks the user through the `interaction` host interface and
//! reports progress, so its component imports `kaizen:plugin/interaction`.

use kaizen_sdk::host::interaction::{self, Choice, InteractionError, Question};
use kaizen_sdk::prelude::*;

/// Input of `Ask`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct AskInput {
    /// The question to put to the user.
    question: String,
    /// The choices offered (the host accepts two to four).
    options: Vec<String>,
}

struct Ask;

impl Tool for Ask {
    const NAME: &'static str = "Ask";
    const DESCRIPTION: &'static str = "Asks the user a multiple-choice question.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = AskInput;

    fn call(_ctx: &CallContext, input: AskInput) -> Result<Output, ToolError> {
        interaction::progress("asking the user", Some(0.5));
        let question = Question {
            question: input.question,
            header: "Question".into(),
            options: input
                .options
                .into_iter()
                .map(|label| Choice {
                    label,
                    description: String::new(),
                })
                .collect(),
            multi_select: false,
        };
        match interaction::ask(&[question]) {
            Ok(answers) => Ok(answers
                .iter()
                .map(|a| a.selected.join(", "))
                .collect::<Vec<_>>()
                .join("\n")
                .into()),
            Err(InteractionError::NoUser) => Err(ToolError::failed(
                "no user is available to answer; decide without asking",
            )),
            Err(InteractionError::Declined) => Err(ToolError::failed("the user declined")),
            Err(InteractionError::Invalid(why)) => Err(ToolError::invalid_input(why)),
        }
    }
}

export_tools!(Ask);
