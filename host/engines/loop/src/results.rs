//! OBSERVE: what the model and the observer see of a finished call: its
//! output as `tool_result` blocks, cut to the run's bound on characters,
//! with what hooks added after it.

use crate::calls::CallOutcome;
use base64::Engine as _;
use kaizen_llm::Block;
use kaizen_tools::{ContentPart, ToolOutput};

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
