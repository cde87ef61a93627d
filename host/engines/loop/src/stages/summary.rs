//! The summary a compaction replaces the older conversation with, when
//! eliding long results is not enough: written by the `compaction` model
//! role's model from the older messages (bounded), charged to the run,
//! and opened by the task as first given, so that the task survives any
//! number of compactions.

use crate::bounded::bounded;
use crate::context::{self, Plan};
use crate::turn::{Ending, Turn};
use kaizen_llm::{Block, Message, Request, Role, StreamEvent, Usage};
use kaizen_protocol::{Event, StepKey, StepKind};

/// How the summariser is asked.
const SUMMARY_SYSTEM: &str = "You compact the conversation of an AI agent that works on a task \
with tools, so that it can go on within its context window. Write the summary it will read \
instead of the conversation you are given. Keep: the user's requirements; the decisions made \
and why; the files read, created or changed (paths) and what changed; the commands run and \
their key results; errors met and whether they were resolved; open todo items; what was \
being done last and what comes next. Be specific (names, paths, numbers, exact error \
messages); no preamble.";

/// Opens a summary message; the task follows it.
const COMPACTED: &str = "[kaizen compacted this session's conversation to stay within the \
model's context window. The task, as first given:]";
/// Follows the task in a summary message.
const SUMMARY_OF: &str = "[A summary of the earlier conversation:]";
/// Closes a summary message.
const GOES_ON: &str = "[The conversation goes on from here; the session's log keeps it whole.]";

/// Bytes of the task a summary message repeats verbatim.
const TASK_BYTES: usize = 8_000;
/// Output tokens a summary may take.
const SUMMARY_TOKENS: u32 = 4_096;

/// What replaces the older messages: a summary, or the same messages with
/// their long results elided.
pub(crate) struct Compacted {
    pub head: Vec<Message>,
    pub summarized: bool,
    pub usage: Usage,
    pub cost_usd: f64,
    /// The model that summarised.
    pub model: Option<String>,
}

impl Compacted {
    /// The older messages, their long results elided.
    pub fn elided(plan: Plan) -> Self {
        Self {
            head: plan.elided,
            summarized: false,
            usage: Usage::default(),
            cost_usd: 0.0,
            model: None,
        }
    }
}

/// The summary of `plan`'s messages by the `compaction` role's model,
/// charged to the run; `Err(Ending)` when the run must end (time,
/// interrupt), `Ok(Err(why))` when the summary failed.
pub(crate) async fn summarize(
    turn: &Turn<'_>,
    plan: &Plan,
    instructions: Option<String>,
) -> Result<Result<Compacted, String>, Ending> {
    let spent = turn.scope.spent.cost();
    let budget = turn.config.budget_usd;
    if spent >= budget {
        return Ok(Err(format!(
            "the run spent ${spent:.4} of its ${budget:.4} budget"
        )));
    }
    let request = summary_request(turn, plan, instructions);
    let observer = turn.observer;
    let sink = |event: StreamEvent| {
        if let StreamEvent::FallingBack { from, to, error } = event {
            observer.on_event(&Event::Fallback { from, to, error });
        }
    };
    // A step of its own, before the cycle's model call: an engine that
    // journals steps hands the summary back rather than paying again.
    let key = StepKey {
        session: turn.state.session_id.clone(),
        cycle: turn.state.cycles + 1,
        kind: StepKind::Model,
        id: "compaction".to_string(),
    };
    let single = turn.provider.complete(&request, &sink);
    let call = turn
        .config
        .steps
        .model(key, Box::pin(async move { vec![single.await] }));
    let response = match bounded(call, turn.scope.deadline, turn.interrupt).await {
        Ok(mut answers) => match answers.pop() {
            Some(Ok(response)) => response,
            Some(Err(err)) => return Ok(Err(err.message)),
            None => return Ok(Err("the summary call returned nothing".into())),
        },
        Err(cut) => return Err(turn.cut_ending(cut, "compacting the conversation")),
    };
    let cost = (turn.pricing)(&response.model, &response.usage);
    turn.scope.charge(&response.usage, cost);
    let summary = response.text();
    if summary.trim().is_empty() {
        return Ok(Err("the summary came back empty".into()));
    }
    let task = task_of(&turn.state.messages);
    let task = context::head(&task, TASK_BYTES);
    let text = format!("{COMPACTED}\n{task}\n\n{SUMMARY_OF}\n{summary}\n\n{GOES_ON}");
    Ok(Ok(Compacted {
        head: vec![text_message(text)],
        summarized: true,
        usage: response.usage,
        cost_usd: cost,
        model: Some(response.model),
    }))
}

/// The summariser's request: the older messages as text (bounded), the
/// todo list, and what `PreCompact` hooks asked for.
fn summary_request(turn: &Turn<'_>, plan: &Plan, instructions: Option<String>) -> Request {
    let config = turn.config;
    let model = config
        .models
        .model_for("compaction", &config.model)
        .to_string();
    let mut system = SUMMARY_SYSTEM.to_string();
    if let Some(instructions) = instructions {
        system.push_str(&format!("\n\nAlso: {instructions}"));
    }
    let budget = (config.context.window as usize).saturating_mul(2);
    let todos = serde_json::to_string(&turn.state.todos).unwrap_or_default();
    let prompt = format!(
        "The conversation so far:\n\n{}\n\nThe todo list: {todos}\n\nWrite the summary.",
        render(&plan.elided, budget)
    );
    Request {
        model,
        system,
        messages: vec![text_message(prompt)],
        tools: Vec::new(),
        max_tokens: turn.config.max_tokens.min(SUMMARY_TOKENS),
        temperature: None,
    }
}

fn text_message(text: String) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::Text { text }],
    }
}

/// The task as first given: the first user message's text, or, after an
/// earlier compaction, the task that compaction's summary repeats.
pub(crate) fn task_of(messages: &[Message]) -> String {
    let first = messages
        .iter()
        .find(|message| message.role == Role::User)
        .map(Message::text)
        .unwrap_or_default();
    let task = first
        .strip_prefix(COMPACTED)
        .and_then(|rest| rest.split_once(SUMMARY_OF))
        .map_or(first.as_str(), |(task, _)| task.trim());
    task.to_string()
}

/// The messages as text for the summariser, at most about `budget` bytes:
/// the start and the end when they are longer.
fn render(messages: &[Message], budget: usize) -> String {
    let mut out = String::new();
    for message in messages {
        out.push_str(match message.role {
            Role::User => "\n[user]\n",
            Role::Assistant => "\n[assistant]\n",
        });
        for block in &message.content {
            render_block(block, &mut out);
        }
    }
    if out.len() <= budget {
        return out;
    }
    let start = context::head(&out, budget / 4);
    let mut from = out.len() - (budget - start.len());
    while !out.is_char_boundary(from) {
        from += 1;
    }
    format!(
        "{start}\n[… {} bytes left out …]\n{}",
        from - start.len(),
        &out[from..]
    )
}

fn render_block(block: &Block, out: &mut String) {
    match block {
        Block::Text { text } => {
            out.push_str(text);
            out.push('\n');
        }
        Block::ToolUse {
            name, arguments, ..
        } => out.push_str(&format!("→ {name} {arguments}\n")),
        Block::ToolResult {
            content, is_error, ..
        } => {
            out.push_str(if *is_error {
                "← error:\n"
            } else {
                "← result:\n"
            });
            for block in content {
                render_block(block, out);
            }
        }
        Block::Image { media_type, .. } => out.push_str(&format!("[an image, {media_type}]\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> Message {
        text_message(text.to_string())
    }

    #[test]
    fn the_task_survives_compactions() {
        assert_eq!(task_of(&[said("Fix the bug.")]), "Fix the bug.");
        let summary = format!("{COMPACTED}\nFix the bug.\n\n{SUMMARY_OF}\nDid X.\n\n{GOES_ON}");
        assert_eq!(task_of(&[said(&summary)]), "Fix the bug.");
        assert_eq!(task_of(&[]), "");
    }

    #[test]
    fn renders_bounded_keeping_start_and_end() {
        let messages: Vec<Message> = (0..100).map(|i| said(&format!("message {i:03}"))).collect();
        let whole = render(&messages, 1_000_000);
        assert!(whole.contains("message 000") && whole.contains("message 099"));
        let cut = render(&messages, 400);
        assert!(cut.len() < 500, "{}", cut.len());
        assert!(cut.contains("message 000") && cut.contains("message 099"));
        assert!(cut.contains("bytes left out"));
    }
}
