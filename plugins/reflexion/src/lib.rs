//! `reflexion`: after a step whose tool calls failed (an error result, or
//! output that says a test failed), the model is asked for a short
//! self-critique of that step, which joins the conversation as a user
//! message before the next THINK. Steps that went well cost nothing.
//!
//! Settings (`[planners.reflexion]`):
//! - `role`: the model role that writes the critique (default `planner`);
//! - `max-tokens`: the critique's length cap (default 300);
//! - `max-reflections`: critiques per run at most (default 5);
//! - `markers`: text in a successful result that still means failure
//!   (default `["FAILED", "Traceback (most recent call last)", "panicked at"]`).

use kaizen_sdk::export_planner;
use kaizen_sdk::llm::{self, CompletionRequest, Message};
use kaizen_sdk::planner::{Context, Plan, Planner, message_text};
use kaizen_sdk::serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};

/// Critiques written in this run (one instance serves one run).
static REFLECTIONS: AtomicU64 = AtomicU64::new(0);

const DEFAULT_MARKERS: &[&str] = &["FAILED", "Traceback (most recent call last)", "panicked at"];
/// How much of one call's arguments or result the critic is shown.
const EXCERPT: usize = 2000;

const CRITIC: &str = "You review one step of an autonomous coding agent that failed. \
    In at most three sentences say what went wrong, the likely cause, and what the agent \
    should do differently next. Do not repeat the output; be specific.";

struct Reflexion;

impl Planner for Reflexion {
    fn plan(ctx: Context) -> Plan {
        let limit = ctx.setting_u64("max-reflections", 5);
        let Some(step) = failed_step(&ctx) else {
            return Plan::default();
        };
        if REFLECTIONS.load(Ordering::Relaxed) >= limit {
            return Plan::default();
        }
        let role = ctx.settings["role"].as_str().unwrap_or("planner");
        let request = CompletionRequest {
            model_role: Some(role.to_string()),
            system: Some(CRITIC.to_string()),
            messages: vec![Message {
                role: "user".into(),
                content: format!("The task:\n{}\n\nThe failed step:\n{step}", ctx.task),
            }],
            max_tokens: Some(ctx.setting_u64("max-tokens", 300) as u32),
            temperature: None,
        };
        // Without a critique (the budget share is spent, the provider
        // failed) the step goes on as plain ReAct.
        let Ok(critique) = llm::complete(&request) else {
            return Plan::default();
        };
        REFLECTIONS.fetch_add(1, Ordering::Relaxed);
        Plan::default().with_message(format!(
            "Reflection on the failed step (from the reflexion planner):\n{}",
            critique.text.trim()
        ))
    }
}

/// The last step's calls and results, described for the critic, when one
/// of them failed.
fn failed_step(ctx: &Context) -> Option<String> {
    let messages = ctx.messages();
    let [.., asked, answered] = messages else {
        return None;
    };
    if asked["role"] != "assistant" || answered["role"] != "user" {
        return None;
    }
    let markers: Vec<String> = match ctx.settings["markers"].as_array() {
        Some(list) => list
            .iter()
            .filter_map(|m| m.as_str().map(str::to_string))
            .collect(),
        None => DEFAULT_MARKERS.iter().map(|m| m.to_string()).collect(),
    };
    let mut failed = false;
    let mut described = Vec::new();
    for result in blocks(answered).filter(|b| b["type"] == "tool_result") {
        let output = message_text(result);
        let is_error = result["is_error"].as_bool().unwrap_or(false);
        failed |= is_error || markers.iter().any(|m| output.contains(m.as_str()));
        let id = result["tool_use_id"].as_str().unwrap_or_default();
        let call = blocks(asked).find(|b| b["type"] == "tool_use" && b["id"] == id);
        let (name, arguments) = call.map_or(("?", ""), |c| {
            (
                c["name"].as_str().unwrap_or("?"),
                c["arguments"].as_str().unwrap_or_default(),
            )
        });
        described.push(format!(
            "- {name} {}\n  {}: {}",
            excerpt(arguments),
            if is_error { "error" } else { "result" },
            excerpt(&output)
        ));
    }
    failed.then(|| described.join("\n"))
}

fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message["content"].as_array().into_iter().flatten()
}

fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

export_planner!(Reflexion);

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_sdk::json;

    fn ctx(results: Value) -> Context {
        Context {
            session_id: "s".into(),
            cycle: 3,
            task: "fix it".into(),
            transcript: json!([
                {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "c1", "name": "Bash", "arguments": "{\"command\":\"cargo test\"}"}
                ]},
                {"role": "user", "content": results},
            ]),
            tools: vec![],
            settings: json!({}),
        }
    }

    fn result(text: &str, is_error: bool) -> Value {
        json!([{"type": "tool_result", "tool_use_id": "c1", "is_error": is_error,
                "content": [{"type": "text", "text": text}]}])
    }

    #[test]
    fn errors_and_failure_markers_count_as_failed_steps() {
        let step = failed_step(&ctx(result("no such file", true))).unwrap();
        assert!(
            step.contains("- Bash {\"command\":\"cargo test\"}"),
            "{step}"
        );
        assert!(step.contains("error: no such file"), "{step}");
        assert!(failed_step(&ctx(result("test a ... FAILED", false))).is_some());
        assert!(failed_step(&ctx(result("all 3 passed", false))).is_none());
    }
}
