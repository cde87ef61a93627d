//! ACT and OBSERVE: running a response's tool calls and turning their
//! results into what the model sees. Consecutive read-only calls run
//! concurrently; anything that may change state runs alone, in order.
//! Results always come back in call order with their ids.

use base64::Engine as _;
use kaizen_llm::Block;
use kaizen_tools::{CallContext, ContentPart, ToolError, ToolOutput, ToolRegistry};
use std::time::{Duration, Instant};

/// A tool call from the model, waiting to run.
#[derive(Debug, Clone)]
pub(crate) struct PendingCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A finished call.
pub(crate) struct CallOutcome {
    pub call: PendingCall,
    pub result: Result<ToolOutput, ToolError>,
    pub duration: Duration,
}

/// Runs `calls`, grouping consecutive read-only ones to run together.
pub(crate) async fn run_calls(
    registry: &ToolRegistry,
    ctx: &CallContext,
    calls: Vec<PendingCall>,
) -> Vec<CallOutcome> {
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
        let runs = now.iter().map(|call| run_one(registry, ctx, call));
        outcomes.extend(futures::future::join_all(runs).await);
        rest = later;
    }
    outcomes
}

async fn run_one(registry: &ToolRegistry, ctx: &CallContext, call: &PendingCall) -> CallOutcome {
    let ctx = CallContext {
        call_id: call.id.clone(),
        ..ctx.clone()
    };
    let started = Instant::now();
    let result = registry.call(&ctx, &call.name, &call.arguments).await;
    CallOutcome {
        call: call.clone(),
        result,
        duration: started.elapsed(),
    }
}

/// The `tool_result` block the model sees for `outcome`, with text cut to
/// `max_chars` characters and a note saying so.
pub(crate) fn result_block(outcome: &CallOutcome, max_chars: usize) -> Block {
    let (content, is_error) = match &outcome.result {
        Ok(output) => (output_blocks(output, max_chars), false),
        Err(err) => (
            vec![Block::Text {
                text: cut_chars(&err.message, max_chars),
            }],
            true,
        ),
    };
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

/// `text` cut to `max` characters, with a note giving the full length.
pub(crate) fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => {
            let total = text.chars().count();
            format!(
                "{}\n\n[Output cut: showing the first {max} of {total} characters. Ask for less at once (a narrower pattern or path, an offset and limit) to see the rest.]",
                &text[..end]
            )
        }
    }
}

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
        let cut = cut_chars("ééééé", 3);
        assert!(cut.starts_with("ééé\n"), "{cut}");
        assert!(cut.contains("first 3 of 5 characters"), "{cut}");
    }
}
