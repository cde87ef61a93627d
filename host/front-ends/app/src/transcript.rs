//! Sessions read back for people: what a listing shows of each, and a
//! session's transcript, a line of text for each thing that happened
//! (what was said, each tool call and its result, the planner's and
//! hooks' completions, compactions, the end), long text cut to its first
//! line. The text is as the model and programs wrote it: a front end that
//! shows it on a terminal takes its control characters out.

use crate::sessions::Shown;
use kaizen_llm::{Block, Message};
use kaizen_loop::Entry;
use kaizen_session_store::SessionMeta;

/// What a listing shows of a session besides its id, status, cycles and
/// cost.
pub struct Listed {
    /// When it started, to the second: `2025-01-31 12:00:00`.
    pub started: String,
    /// Its task's first line, marked with where it ran when that was not
    /// Kaizen's own loop here: `[codex] ...`, `[cluster] ...`.
    pub task: String,
}

/// What a listing shows of `meta`.
pub fn listed(meta: &SessionMeta) -> Listed {
    let started = meta.started.get(..19).unwrap_or(&meta.started);
    let task = first_line(&meta.task, 60);
    let task = match (&meta.runtime, &meta.cluster) {
        (Some(runtime), _) => format!("[{runtime}] {task}"),
        (None, Some(_)) => format!("[cluster] {task}"),
        (None, None) => task,
    };
    Listed {
        started: started.replace('T', " "),
        task,
    }
}

/// The session as lines for people: who it is, then its log.
pub fn transcript(shown: &Shown) -> Vec<String> {
    let Shown { id, meta, log } = shown;
    let Some(log) = log else {
        return vec![
            format!(
                "session {id} ({}, {} cycles, ${:.4}) on {}, whose own session is {}; it keeps the conversation",
                meta.status,
                meta.cycles,
                meta.cost_usd,
                meta.runtime.as_deref().unwrap_or("another runtime"),
                meta.runtime_session.as_deref().unwrap_or("unknown")
            ),
            format!("task: {}", meta.task),
        ];
    };
    let mut lines = vec![format!(
        "session {id} ({}, {} cycles, ${:.4})",
        meta.status, meta.cycles, meta.cost_usd
    )];
    if let Some(parent) = &meta.parent {
        lines.push(format!(
            "forked from {} after cycle {}",
            parent.id, parent.step
        ));
    }
    let mut cycle = 0;
    for record in &log.events {
        entry_lines(&record.entry, &mut cycle, &mut lines);
    }
    lines
}

fn entry_lines(entry: &Entry, cycle: &mut u32, out: &mut Vec<String>) {
    let line = match entry {
        Entry::Start { model, cwd, .. } => format!("\n── run started: {model} in {cwd}"),
        Entry::User { message } => return message_lines("user", message, out),
        Entry::Turn { message, .. } => {
            *cycle += 1;
            return message_lines(&format!("assistant [cycle {cycle}]"), message, out);
        }
        Entry::Results {
            message: Some(message),
            ..
        } => return message_lines("results", message, out),
        Entry::Results { message: None, .. } => "(the step was cut off)".to_string(),
        Entry::Planner {
            cost_usd, todos, ..
        } => {
            let todos = todos
                .as_ref()
                .map(|todos| format!(", set {} todos", todos.len()))
                .unwrap_or_default();
            format!("(the planner: ${cost_usd:.4}{todos})")
        }
        Entry::Hooks {
            event, cost_usd, ..
        } => format!("({event} hooks' completions: ${cost_usd:.4})"),
        Entry::Clear => "(the conversation was cleared)".to_string(),
        Entry::Compaction {
            kept_from,
            summarized,
            cost_usd,
            ..
        } => match summarized {
            true => format!("── compacted: {kept_from} messages summarised (${cost_usd:.4})"),
            false => format!("── compacted: long tool results in {kept_from} messages elided"),
        },
        Entry::End { status, error } => match error {
            Some(error) => format!("── ended: {} ({error})", status.as_str()),
            None => format!("── ended: {}", status.as_str()),
        },
    };
    out.push(line);
}

fn message_lines(who: &str, message: &Message, out: &mut Vec<String>) {
    for block in &message.content {
        match block {
            Block::Text { text } if !text.trim().is_empty() => {
                out.push(format!("{who}: {}", text.trim_end()));
            }
            Block::ToolUse {
                name, arguments, ..
            } => out.push(format!("  → {name} {}", first_line(arguments, 200))),
            Block::ToolResult {
                content, is_error, ..
            } => {
                let text: String = content
                    .iter()
                    .filter_map(|b| match b {
                        Block::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let mark = if *is_error { "✗" } else { "←" };
                let lines = text.lines().count();
                let more = if lines > 1 {
                    format!(" (+{} lines)", lines - 1)
                } else {
                    String::new()
                };
                out.push(format!("  {mark} {}{more}", first_line(&text, 160)));
            }
            _ => {}
        }
    }
}

/// The first line of `text`, cut to `max` characters with an ellipsis.
pub fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_are_cut_with_an_ellipsis() {
        assert_eq!(first_line("one\ntwo", 10), "one");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("", 3), "");
    }
}
