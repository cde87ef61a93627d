//! How full the model's context window is, and what of the conversation a
//! compaction replaces: the policy (window, threshold, how much stays
//! verbatim, which results are elided), the meter that estimates the next
//! request's tokens, and the plan of a compaction. Pure; `stages/compact.rs`
//! carries it out.

use kaizen_llm::{Block, Message, Role, ToolDefinition, tokens};

/// When a THINK compacts first, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextPolicy {
    /// Tokens the model's window holds; 0 turns compaction off.
    pub window: u64,
    /// The fraction of the window at which a THINK compacts first.
    pub threshold: f64,
    /// The fraction of the window the recent turns kept verbatim may fill.
    pub keep_recent: f64,
    /// Older tool results longer than this many bytes are elided first.
    pub elide_over: usize,
}

/// Defaults: compact at 80 % of the window, keep up to 30 % verbatim,
/// elide older results over 4 KiB.
pub const DEFAULT_THRESHOLD: f64 = 0.8;
/// See [`DEFAULT_THRESHOLD`].
pub const DEFAULT_KEEP_RECENT: f64 = 0.3;
/// See [`DEFAULT_THRESHOLD`].
pub const DEFAULT_ELIDE_OVER: usize = 4096;

impl Default for ContextPolicy {
    fn default() -> Self {
        Self {
            window: kaizen_llm::DEFAULT_WINDOW,
            threshold: DEFAULT_THRESHOLD,
            keep_recent: DEFAULT_KEEP_RECENT,
            elide_over: DEFAULT_ELIDE_OVER,
        }
    }
}

impl ContextPolicy {
    /// The tokens past which a THINK compacts first.
    pub fn limit(&self) -> u64 {
        (self.window as f64 * self.threshold) as u64
    }
}

/// Tokens a message takes beyond its content (role, separators).
const MESSAGE_OVERHEAD: u64 = 4;
/// What an image is counted as.
const IMAGE_TOKENS: u64 = 1_000;

/// The tokens of `messages` for `model`.
pub(crate) fn message_tokens(model: &str, messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|message| {
            MESSAGE_OVERHEAD
                + message
                    .content
                    .iter()
                    .map(|b| block_tokens(model, b))
                    .sum::<u64>()
        })
        .sum()
}

fn block_tokens(model: &str, block: &Block) -> u64 {
    match block {
        Block::Text { text } => tokens::count(model, text),
        Block::ToolUse {
            name, arguments, ..
        } => tokens::count(model, name) + tokens::count(model, arguments),
        Block::ToolResult { content, .. } => content.iter().map(|b| block_tokens(model, b)).sum(),
        Block::Image { .. } => IMAGE_TOKENS,
    }
}

/// The tokens of a whole request's prompt.
pub(crate) fn request_tokens(
    model: &str,
    system: &str,
    tools: &[ToolDefinition],
    messages: &[Message],
) -> u64 {
    let tools: u64 = tools
        .iter()
        .map(|tool| {
            tokens::count(model, &tool.name)
                + tokens::count(model, &tool.description)
                + tokens::count(model, &tool.input_schema.to_string())
        })
        .sum();
    tokens::count(model, system) + tools + message_tokens(model, messages)
}

/// Estimates the next request's tokens from what the provider reported
/// for the last one (exact for everything up to its answer) and a count
/// of what joined the conversation since; with no report (a provider that
/// does not say), from its own count of the request so far and of what
/// joined since; after a compaction, a count of it all. The conversation
/// only grows between compactions, so each message is counted once.
#[derive(Debug, Default)]
pub(crate) struct ContextMeter {
    /// The last call's prompt and answer tokens, and the conversation's
    /// length once its answer joined it.
    anchor: Option<(u64, usize)>,
    /// The meter's own last count of the whole request, and the
    /// conversation's length then.
    counted: Option<(u64, usize)>,
}

impl ContextMeter {
    /// Notes a model call's reported usage; `messages` now ends with its
    /// answer.
    pub fn reported(&mut self, usage: &kaizen_llm::Usage, messages: usize) {
        let prompt = usage.total_input();
        self.anchor = (prompt > 0).then_some((prompt + usage.output_tokens, messages));
    }

    /// Forgets the report and the count: the conversation changed under
    /// them (a compaction), or the way of counting did.
    pub fn reset(&mut self) {
        self.anchor = None;
        self.counted = None;
    }

    /// The next request's estimated tokens.
    pub fn estimate(
        &mut self,
        model: &str,
        system: &str,
        tools: &[ToolDefinition],
        messages: &[Message],
    ) -> u64 {
        let since = |(tokens, length): (u64, usize)| {
            (length <= messages.len()).then(|| tokens + message_tokens(model, &messages[length..]))
        };
        if let Some(estimate) = self.anchor.and_then(since) {
            return estimate;
        }
        let estimate = self
            .counted
            .and_then(since)
            .unwrap_or_else(|| request_tokens(model, system, tools, messages));
        self.counted = Some((estimate, messages.len()));
        estimate
    }
}

/// What a compaction replaces: the messages before `cut` (which starts an
/// assistant turn, so that the kept tail follows a user message), and
/// those messages with their long tool results elided.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    /// The first message kept verbatim.
    pub cut: usize,
    /// `messages[..cut]`, long tool results elided.
    pub elided: Vec<Message>,
    /// How many results were elided.
    pub elisions: usize,
}

/// Where to cut `messages` so that what follows fits `keep` tokens (at
/// least the last assistant turn stays, and at least the first goes), and
/// the older part elided. `None` when there is only one turn.
pub(crate) fn plan(
    model: &str,
    messages: &[Message],
    keep: u64,
    elide_over: usize,
) -> Option<Plan> {
    let turns: Vec<usize> = (1..messages.len())
        .filter(|&i| messages[i].role == Role::Assistant)
        .collect();
    let mut cut = *turns.last()?;
    // The tail's tokens, counted once per message from the end.
    let mut tail = 0;
    let mut end = messages.len();
    for &start in turns.iter().rev() {
        tail += message_tokens(model, &messages[start..end]);
        if tail > keep {
            break;
        }
        (cut, end) = (start, start);
    }
    // At least the first turn goes, else there is nothing to compact.
    let cut = cut.max(*turns.get(1)?);
    let mut elisions = 0;
    let elided = messages[..cut]
        .iter()
        .map(|message| elide(message, elide_over, &mut elisions))
        .collect();
    Some(Plan {
        cut,
        elided,
        elisions,
    })
}

/// `message` with each tool result longer than `over` bytes cut to its
/// start and a note.
fn elide(message: &Message, over: usize, elisions: &mut usize) -> Message {
    let content = message
        .content
        .iter()
        .map(|block| match block {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let length: usize = content.iter().map(text_len).sum();
                if length <= over {
                    return block.clone();
                }
                *elisions += 1;
                let text = content.iter().find_map(|b| match b {
                    Block::Text { text } => Some(text.as_str()),
                    _ => None,
                });
                let start = head(text.unwrap_or_default(), over.min(400));
                Block::ToolResult {
                    tool_use_id: tool_use_id.clone(),
                    content: vec![Block::Text {
                        text: format!(
                            "{start}\n[… kaizen elided this result when compacting the conversation: {length} bytes; the session's log keeps it whole]"
                        ),
                    }],
                    is_error: *is_error,
                }
            }
            other => other.clone(),
        })
        .collect();
    Message {
        role: message.role,
        content,
    }
}

fn text_len(block: &Block) -> usize {
    match block {
        Block::Text { text } => text.len(),
        _ => 0,
    }
}

/// The first `bytes` of `text`, on a character boundary.
pub(crate) fn head(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.into(),
                name: "Bash".into(),
                arguments: "{}".into(),
            }],
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id.into(),
                content: vec![Block::Text { text: text.into() }],
                is_error: false,
            }],
        }
    }

    /// A task and `n` steps whose results are `size` bytes each.
    fn session(n: usize, size: usize) -> Vec<Message> {
        let mut messages = vec![user("the task")];
        for i in 0..n {
            messages.push(call(&format!("c{i}")));
            messages.push(result(&format!("c{i}"), &"x".repeat(size)));
        }
        messages
    }

    #[test]
    fn the_cut_keeps_what_fits_and_starts_a_turn() {
        // Each step: ~4 + 1 + 1 + 4 + 250 tokens (roughly, 4 bytes a token).
        let messages = session(6, 1000);
        let plan = plan("claude-x", &messages, 600, 4096).unwrap();
        assert_eq!(messages[plan.cut].role, Role::Assistant);
        // Two steps fit in 600 tokens, three do not.
        assert_eq!(plan.cut, messages.len() - 4);
        assert_eq!(plan.elided.len(), plan.cut);
        assert_eq!(plan.elisions, 0);
    }

    #[test]
    fn the_last_turn_stays_even_when_it_alone_is_over() {
        let messages = session(3, 10_000);
        let plan = plan("claude-x", &messages, 10, 4096).unwrap();
        assert_eq!(plan.cut, messages.len() - 2);
        assert_eq!(plan.elisions, 2);
        let Block::ToolResult { content, .. } = &plan.elided[2].content[0] else {
            panic!("a result");
        };
        let Block::Text { text } = &content[0] else {
            panic!("text");
        };
        assert!(text.contains("elided this result") && text.contains("10000 bytes"));
        assert!(text.len() < 600);
    }

    #[test]
    fn nothing_older_than_the_last_turn_is_no_plan() {
        assert_eq!(plan("m", &session(1, 10), 0, 10), None);
        assert_eq!(plan("m", &[user("only the task")], 0, 10), None);
    }

    #[test]
    fn the_meter_adds_what_joined_since_the_last_report() {
        let mut meter = ContextMeter::default();
        let messages = session(1, 400);
        let counted = meter.estimate("claude-x", "system", &[], &messages);
        assert_eq!(
            counted,
            request_tokens("claude-x", "system", &[], &messages)
        );
        let usage = kaizen_llm::Usage {
            input_tokens: 1_000,
            output_tokens: 50,
            ..Default::default()
        };
        meter.reported(&usage, 2);
        assert_eq!(
            meter.estimate("claude-x", "system", &[], &messages),
            1_050 + message_tokens("claude-x", &messages[2..])
        );
        // No report: the meter's own count goes on from where it was.
        meter.reported(&kaizen_llm::Usage::default(), 3);
        assert_eq!(
            meter.estimate("claude-x", "system", &[], &messages),
            counted
        );
        let mut longer = messages.clone();
        longer.push(call("c9"));
        assert_eq!(
            meter.estimate("claude-x", "system", &[], &longer),
            counted + message_tokens("claude-x", &longer[3..])
        );
        meter.reset();
        assert_eq!(
            meter.estimate("claude-x", "system", &[], &longer),
            request_tokens("claude-x", "system", &[], &longer)
        );
    }

    #[test]
    fn heads_end_on_character_boundaries() {
        assert_eq!(head("héllo", 2), "h");
        assert_eq!(head("abc", 10), "abc");
    }
}
