//! `tree-of-thoughts`: for the first THINK steps of a run (the depth), the
//! model is asked for several candidate responses at once (the beam
//! width); an evaluator call scores each one, and the best is kept (the
//! first of equals). Later steps run as plain ReAct. Every candidate and
//! score costs a model call, all counted in the run.
//!
//! Settings (`[planners.tree-of-thoughts]`):
//! - `beam-width`: candidates per step (default 3; the host caps it with
//!   `[planner] max-candidates`);
//! - `max-depth`: how many of the first steps branch (default 3);
//! - `role`: the model role that scores (default `evaluator`).

use kaizen_sdk::export_planner;
use kaizen_sdk::llm::{self, CompletionRequest, Message};
use kaizen_sdk::planner::{Context, Plan, Planner, message_text};
use kaizen_sdk::serde_json::Value;

const EVALUATOR: &str = "You score one candidate next step of an autonomous coding agent \
    from 1 (useless or wrong) to 10 (clearly the best way forward). Reply with the number only.";

struct TreeOfThoughts;

impl Planner for TreeOfThoughts {
    fn plan(ctx: Context) -> Plan {
        let depth = ctx.setting_u64("max-depth", 3);
        let width = ctx.setting_u64("beam-width", 3) as u32;
        if u64::from(ctx.cycle) > depth || width < 2 {
            return Plan::default();
        }
        Plan::default().with_candidates(width)
    }

    fn select(ctx: Context, candidates: Vec<Value>) -> u32 {
        let role = ctx.settings["role"].as_str().unwrap_or("evaluator");
        let mut best = (0, 0);
        for (index, candidate) in candidates.iter().enumerate() {
            let score = score(&ctx, role, candidate);
            if score > best.1 {
                best = (index as u32, score);
            }
        }
        best.0
    }
}

/// The evaluator's score of one candidate; 0 when it gave none.
fn score(ctx: &Context, role: &str, candidate: &Value) -> u32 {
    let request = CompletionRequest {
        model_role: Some(role.to_string()),
        system: Some(EVALUATOR.to_string()),
        messages: vec![Message {
            role: "user".into(),
            content: format!(
                "The task:\n{}\n\nThe candidate next step:\n{}",
                ctx.task,
                describe(candidate)
            ),
        }],
        max_tokens: Some(10),
        temperature: None,
    };
    llm::complete(&request)
        .ok()
        .and_then(|done| first_number(&done.text))
        .unwrap_or(0)
}

/// A candidate as the evaluator reads it: its text and its tool calls.
fn describe(candidate: &Value) -> String {
    let mut parts = vec![message_text(candidate)];
    for call in candidate["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "tool_use")
    {
        parts.push(format!(
            "calls {} with {}",
            call["name"].as_str().unwrap_or("?"),
            call["arguments"].as_str().unwrap_or_default()
        ));
    }
    parts.retain(|part| !part.is_empty());
    parts.join("\n")
}

fn first_number(text: &str) -> Option<u32> {
    let digits: String = text
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

export_planner!(TreeOfThoughts);

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_sdk::json;

    #[test]
    fn scores_and_candidates_read_as_the_evaluator_needs() {
        assert_eq!(first_number("8"), Some(8));
        assert_eq!(first_number("Score: 7/10"), Some(7));
        assert_eq!(first_number("none"), None);
        let candidate = json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "a", "name": "Read", "arguments": "{\"file_path\":\"/x\"}"}
        ]});
        assert_eq!(
            describe(&candidate),
            "Let me look.\ncalls Read with {\"file_path\":\"/x\"}"
        );
    }
}
