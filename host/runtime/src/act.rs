//! ACT and OBSERVE: running a response's tool calls and turning their
//! results into what the model sees. Consecutive read-only calls run
//! concurrently; anything that may change state runs alone, in order.
//! Results always come back in call order with their ids.

use crate::admit::{Admission, Gatekeeper};
use crate::steps::ToolStepped;
use base64::Engine as _;
use kaizen_llm::Block;
use kaizen_protocol::{StepKey, StepKind};
use kaizen_tools::{CallContext, ContentPart, ToolError, ToolOutput};
use std::time::{Duration, Instant};

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

/// Runs `calls` through the guard, grouping consecutive read-only ones to
/// run together. Each group's calls are admitted one after another (a
/// question to the user is one at a time), run, then handed to the
/// post-call hooks in order.
pub(crate) async fn run_calls(gate: &Gatekeeper<'_>, calls: Vec<PendingCall>) -> Vec<CallOutcome> {
    let registry = gate.registry;
    let read_only = |call: &PendingCall| {
        // An unknown tool fails at once without side effects.
        registry
            .get(&call.name)
            .is_none_or(|tool| tool.spec().read_only)
    };
    let mut outcomes = Vec::with_capacity(calls.len());
    let mut rest = calls.as_slice();
    while let Some(first) = rest.first() {
        let group = if read_only(first) {
            rest.iter().take_while(|c| read_only(c)).count()
        } else {
            1
        };
        let (now, later) = rest.split_at(group);
        let mut admitted = Vec::with_capacity(now.len());
        for call in now {
            admitted.push((call, gate.admit(call).await));
        }
        let runs = admitted
            .into_iter()
            .map(|(call, admission)| run_one(gate, call, admission));
        let mut done = futures::future::join_all(runs).await;
        for outcome in done.iter_mut() {
            let input = outcome.input.clone();
            gate.after(outcome, &input).await;
        }
        outcomes.extend(done);
        rest = later;
    }
    outcomes
}

async fn run_one(gate: &Gatekeeper<'_>, call: &PendingCall, admission: Admission) -> CallOutcome {
    let (input, context) = match admission {
        Admission::Run { input, context } => (input, context),
        Admission::Refused {
            error,
            denied,
            context,
        } => {
            return CallOutcome {
                call: call.clone(),
                input: arguments_value(&call.arguments),
                result: Err(error),
                duration: Duration::ZERO,
                denied,
                context,
            };
        }
    };
    let ctx = CallContext {
        call_id: call.id.clone(),
        ..gate.ctx.clone()
    };
    let key = StepKey {
        session: ctx.session_id.clone(),
        cycle: gate.cycle,
        kind: StepKind::Tool,
        id: call.id.clone(),
    };
    let started = Instant::now();
    // Through the registry, which checks the input once more (cheap) and
    // bounds the output's size. What the call spent travels with its
    // result: a step a journal hands back is charged as it was.
    let dispatch = Box::pin(async {
        let result = gate.registry.call_value(&ctx, &call.name, &input).await;
        let charged = gate
            .scope
            .map(|scope| scope.charged_for(&call.id))
            .unwrap_or_default();
        ToolStepped { result, charged }
    });
    let stepped = gate.steps.tool(key, dispatch).await;
    if let Some(scope) = gate.scope {
        scope.recharge(&call.id, &stepped.charged);
    }
    let result = stepped.result;
    CallOutcome {
        call: call.clone(),
        input,
        result,
        duration: started.elapsed(),
        denied: false,
        context,
    }
}

/// The arguments as JSON when they parse, else as the raw string.
pub(crate) fn arguments_value(raw: &str) -> serde_json::Value {
    serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.into()))
}

/// The `tool_result` block the model sees for `outcome`, with text cut to
/// `max_chars` characters and a note saying so.
pub(crate) fn result_block(outcome: &CallOutcome, max_chars: usize) -> Block {
    let (mut content, is_error) = match &outcome.result {
        Ok(output) => (output_blocks(output, max_chars), false),
        Err(err) => (
            vec![Block::Text {
                text: cut_chars(&err.message, max_chars),
            }],
            true,
        ),
    };
    // What hooks added comes after the tool's own words, marked as theirs.
    for context in &outcome.context {
        content.push(Block::Text {
            text: format!(
                "<hook-context>\n{}\n</hook-context>",
                cut_chars(context, max_chars)
            ),
        });
    }
    Block::ToolResult {
        tool_use_id: outcome.call.id.clone(),
        content,
        is_error,
    }
}

fn output_blocks(output: &ToolOutput, max_chars: usize) -> Vec<Block> {
    let mut blocks: Vec<Block> = output
        .content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => Block::Text {
                text: cut_chars(text, max_chars),
            },
            ContentPart::Image { media_type, data } => Block::Image {
                media_type: media_type.clone(),
                data_base64: base64::engine::general_purpose::STANDARD.encode(data),
            },
        })
        .collect();
    if blocks.is_empty() {
        // Providers reject empty tool results; say there was no output.
        blocks.push(Block::Text {
            text: "(no output)".into(),
        });
    }
    blocks
}

/// `text` cut to `max` characters: its start and its last
/// [`KEPT_TAIL_CHARS`] (where tools put their paging notes), with a note
/// between them giving the full length.
///
/// Tools bound their own output (Read by size, Bash and Grep at 30,000
/// characters); this cut is the loop's safety net above them, for a plugin
/// that returns more.
pub(crate) fn cut_chars(text: &str, max: usize) -> String {
    let Some((head_end, _)) = text.char_indices().nth(max) else {
        return text.to_string();
    };
    let total = text.chars().count();
    let tail_chars = KEPT_TAIL_CHARS.min(max / 2);
    let head_chars = max - tail_chars;
    let head_end = text
        .char_indices()
        .nth(head_chars)
        .map_or(head_end, |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth_back(tail_chars.saturating_sub(1))
        .map_or(text.len(), |(i, _)| i);
    let tail = if tail_chars == 0 {
        ""
    } else {
        &text[tail_start..]
    };
    format!(
        "{}\n\n[Output cut: {total} characters is more than the {max} a result may have; \
         {} characters from here on are left out, down to the last {tail_chars}. Ask for less \
         at once (a narrower pattern or path, an offset and limit) to see them.]\n\n{tail}",
        &text[..head_end],
        total - head_chars - tail_chars,
    )
}

/// Characters kept from the end of a cut result, so that a tool's closing
/// note (how to read on) survives the cut.
const KEPT_TAIL_CHARS: usize = 2_000;

/// The text the observer shows for a result (already cut).
pub(crate) fn result_text(block: &Block) -> String {
    match block {
        Block::ToolResult { content, .. } => content
            .iter()
            .map(|b| match b {
                Block::Text { text } => text.clone(),
                Block::Image { media_type, .. } => format!("[image {media_type}]"),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_counts_characters_and_says_how_many() {
        assert_eq!(cut_chars("short", 10), "short");
        let cut = cut_chars("abcdéfghij", 4);
        assert!(cut.starts_with("ab\n"), "{cut}");
        assert!(cut.ends_with("\n\nij"), "the end is kept: {cut}");
        assert!(cut.contains("10 characters is more than the 4"), "{cut}");
        assert!(cut.contains("6 characters from here on"), "{cut}");
    }

    #[test]
    fn a_closing_note_survives_the_cut() {
        let note = "(Showing lines 1-2000 of 3000. To read on, call Read again with offset=2001.)";
        let text = format!("{}{note}", "line\n".repeat(10_000));
        let cut = cut_chars(&text, 10_000);
        assert!(cut.ends_with(note), "{}", &cut[cut.len() - 200..]);
        assert!(cut.chars().count() < 10_000 + 300);
    }
}
