//! `plan-execute-verify`: before the first THINK the model writes a short
//! plan, which becomes the session's todo list; each THINK is told the
//! plan and its current step (the first one not completed: the model marks
//! steps done with `TodoWrite`); a final answer is checked against the
//! plan, and one that leaves steps undone gets a revision (the host bounds
//! how many).
//!
//! Settings (`[planners.plan-execute-verify]`):
//! - `max-steps`: the plan's length at most (default 6);
//! - `role`: the model role that writes the plan (default `planner`);
//! - `verify-role`: the model role that checks the answer (default
//!   `evaluator`).

use kaizen_sdk::export_planner;
use kaizen_sdk::llm::{self, CompletionRequest, Message};
use kaizen_sdk::planner::{Context, Plan, Planner, Verdict};
use kaizen_sdk::serde_json::{Value, json};
use kaizen_sdk::session;
use std::sync::Mutex;

/// Whether the plan was asked for in this run (one instance serves one
/// run): it is asked for once, even when that fails.
static PLANNED: Mutex<bool> = Mutex::new(false);

const PLANNER: &str = "You plan the work of an autonomous coding agent that has tools. \
    Write a plan of short, concrete steps, one per line, numbered. No other text.";

const CHECKER: &str = "You check whether an autonomous agent's final answer shows that \
    every step of its plan was done. Reply ACCEPT on the first line if so. Otherwise \
    reply REVISE on the first line, and on the next lines say what is missing.";

struct PlanExecuteVerify;

impl Planner for PlanExecuteVerify {
    fn plan(ctx: Context) -> Plan {
        let first = {
            let mut planned = PLANNED.lock().unwrap_or_else(|e| e.into_inner());
            !std::mem::replace(&mut *planned, true)
        };
        let todos = if first {
            match write_plan(&ctx) {
                Some(steps) => todo_list(&steps),
                None => return Plan::default(),
            }
        } else {
            session::todos()
        };
        if todos.is_empty() {
            return Plan::default();
        }
        let plan = Plan::default().with_system(guidance(&todos));
        if first {
            plan.with_todos(Value::Array(todos))
        } else {
            plan
        }
    }

    fn verify(ctx: Context, answer: String) -> Verdict {
        let todos = session::todos();
        if todos.is_empty() {
            return Verdict::Accept;
        }
        let role = ctx.settings["verify-role"].as_str().unwrap_or("evaluator");
        let prompt = format!(
            "The task:\n{}\n\nThe plan:\n{}\n\nThe final answer:\n{answer}",
            ctx.task,
            listing(&todos)
        );
        match ask(role, CHECKER, prompt, 300) {
            Some(reply) => verdict(&reply),
            // Without a check the answer stands: a planner never blocks
            // the end of a run.
            None => Verdict::Accept,
        }
    }
}

fn ask(role: &str, system: &str, prompt: String, max_tokens: u32) -> Option<String> {
    let request = CompletionRequest {
        model_role: Some(role.to_string()),
        system: Some(system.to_string()),
        messages: vec![Message {
            role: "user".into(),
            content: prompt,
        }],
        max_tokens: Some(max_tokens),
        temperature: None,
    };
    llm::complete(&request).ok().map(|done| done.text)
}

/// The plan's steps, from the model.
fn write_plan(ctx: &Context) -> Option<Vec<String>> {
    let max = ctx.setting_u64("max-steps", 6).max(1) as usize;
    let role = ctx.settings["role"].as_str().unwrap_or("planner");
    let prompt = format!(
        "The task:\n{}\n\nThe agent's tools: {}.\n\nWrite at most {max} steps.",
        ctx.task,
        ctx.tools.join(", ")
    );
    let reply = ask(role, PLANNER, prompt, 500)?;
    let steps: Vec<String> = reply.lines().filter_map(step).take(max).collect();
    (!steps.is_empty()).then_some(steps)
}

/// A plan line without its numbering or bullet; `None` for a blank one.
fn step(line: &str) -> Option<String> {
    let text = line
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['.', ')', '-', '*', ':'])
        .trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn todo_list(steps: &[String]) -> Vec<Value> {
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            json!({
                "content": step,
                "status": if i == 0 { "in_progress" } else { "pending" },
                "activeForm": step,
            })
        })
        .collect()
}

fn listing(todos: &[Value]) -> String {
    todos
        .iter()
        .enumerate()
        .map(|(i, todo)| {
            format!(
                "{}. [{}] {}",
                i + 1,
                todo["status"].as_str().unwrap_or("pending"),
                todo["content"].as_str().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the coming THINK is told.
fn guidance(todos: &[Value]) -> String {
    let current = todos
        .iter()
        .find(|todo| todo["status"] != "completed")
        .and_then(|todo| todo["content"].as_str());
    let next = match current {
        Some(step) => format!("The current step: {step}"),
        None => "Every step is marked completed: check the work and answer.".to_string(),
    };
    format!(
        "You are following this plan (it is the session's todo list; mark each step \
         completed with TodoWrite when it is done):\n{}\n{next}",
        listing(todos)
    )
}

fn verdict(reply: &str) -> Verdict {
    let mut lines = reply.trim().lines();
    let first = lines.next().unwrap_or_default().trim().to_ascii_uppercase();
    if !first.starts_with("REVISE") {
        return Verdict::Accept;
    }
    let missing: Vec<&str> = lines.collect();
    let missing = match missing.join("\n").trim() {
        "" => "a step of the plan".to_string(),
        text => text.to_string(),
    };
    Verdict::Revise(format!(
        "The plan-execute-verify planner checked the answer against the plan and found work missing:\n{missing}\nFinish it, then answer again."
    ))
}

export_planner!(PlanExecuteVerify);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_lines_lose_their_numbering() {
        let steps: Vec<String> = "1. Read the code\n2) Fix the bug\n\n- Run the tests"
            .lines()
            .filter_map(step)
            .collect();
        assert_eq!(steps, ["Read the code", "Fix the bug", "Run the tests"]);
        let todos = todo_list(&steps);
        assert_eq!(todos[0]["status"], "in_progress");
        assert_eq!(todos[2]["status"], "pending");
        assert!(guidance(&todos).contains("The current step: Read the code"));
    }

    #[test]
    fn only_a_revise_reply_asks_for_a_revision() {
        assert!(matches!(verdict("ACCEPT"), Verdict::Accept));
        assert!(matches!(verdict("Looks fine"), Verdict::Accept));
        let Verdict::Revise(text) = verdict("REVISE\nThe tests were not run.") else {
            panic!("a revision");
        };
        assert!(text.contains("The tests were not run."), "{text}");
    }
}
