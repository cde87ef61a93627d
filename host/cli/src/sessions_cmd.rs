//! `kaizen sessions` and `kaizen rewind`: the sessions kept under
//! `$KAIZEN_HOME/sessions`, read back for people.

use kaizen_app::session;
use kaizen_llm::{Block, Message};
use kaizen_protocol::Event;
use kaizen_runtime::{Entry, LogRecord};
use std::time::Duration;

/// `kaizen sessions list`.
pub fn list(json: bool) -> anyhow::Result<()> {
    let sessions = session::open_store()?.list()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(());
    }
    if sessions.is_empty() {
        println!("No sessions yet: `kaizen run` keeps each run as one.");
        return Ok(());
    }
    println!(
        "{:<28} {:<20} {:<16} {:>6} {:>9}  TASK",
        "ID", "STARTED", "STATUS", "CYCLES", "COST"
    );
    for meta in sessions {
        let started = meta
            .started
            .get(..19)
            .unwrap_or(&meta.started)
            .replace('T', " ");
        let task = match (&meta.runtime, &meta.cluster) {
            (Some(runtime), _) => format!("[{runtime}] {}", first_line(&meta.task, 60)),
            (None, Some(_)) => format!("[cluster] {}", first_line(&meta.task, 60)),
            (None, None) => first_line(&meta.task, 60),
        };
        println!(
            "{:<28} {:<20} {:<16} {:>6} {:>9}  {task}",
            meta.id,
            started,
            meta.status,
            meta.cycles,
            format!("${:.4}", meta.cost_usd),
        );
    }
    Ok(())
}

/// `println!` for text that holds what the model or a program wrote: no
/// control character of it reaches the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", crate::terminal::printable(&format!($($arg)*)))
    };
}

/// `kaizen sessions show`.
pub fn show(name: &str, json: bool) -> anyhow::Result<()> {
    let store = session::open_store()?;
    let id = store.resolve(name)?;
    let meta = store.meta(&id)?;
    if let Some(runtime) = &meta.runtime {
        // Its conversation is the runtime's to keep.
        if json {
            println!("{}", serde_json::to_string(&meta)?);
        } else {
            say!(
                "session {id} ({}, {} cycles, ${:.4}) on {runtime}, whose own session is {}; it keeps the conversation",
                meta.status,
                meta.cycles,
                meta.cost_usd,
                meta.runtime_session.as_deref().unwrap_or("unknown")
            );
            say!("task: {}", meta.task);
        }
        return Ok(());
    }
    let read = store.read_events::<LogRecord>(&id)?;
    if json {
        for record in &read.events {
            println!("{}", serde_json::to_string(record)?);
        }
    } else {
        say!(
            "session {id} ({}, {} cycles, ${:.4})",
            meta.status,
            meta.cycles,
            meta.cost_usd
        );
        if let Some(parent) = &meta.parent {
            say!("forked from {} after cycle {}", parent.id, parent.step);
        }
        let mut cycle = 0;
        for record in &read.events {
            print_entry(&record.entry, &mut cycle);
        }
    }
    if let Some(warning) = read.torn_tail {
        eprintln!("kaizen: warning: {}", crate::terminal::printable(&warning));
    }
    Ok(())
}

fn print_entry(entry: &Entry, cycle: &mut u32) {
    match entry {
        Entry::Start { model, cwd, .. } => say!("\n── run started: {model} in {cwd}"),
        Entry::User { message } => print_message("user", message),
        Entry::Turn { message, .. } => {
            *cycle += 1;
            print_message(&format!("assistant [cycle {cycle}]"), message);
        }
        Entry::Results {
            message: Some(message),
            ..
        } => print_message("results", message),
        Entry::Results { message: None, .. } => say!("(the step was cut off)"),
        Entry::Planner {
            cost_usd, todos, ..
        } => {
            let todos = todos
                .as_ref()
                .map(|todos| format!(", set {} todos", todos.len()))
                .unwrap_or_default();
            say!("(the planner: ${cost_usd:.4}{todos})");
        }
        Entry::Hooks {
            event, cost_usd, ..
        } => say!("({event} hooks' completions: ${cost_usd:.4})"),
        Entry::Compaction {
            kept_from,
            summarized,
            cost_usd,
            ..
        } => match summarized {
            true => say!("── compacted: {kept_from} messages summarised (${cost_usd:.4})"),
            false => say!("── compacted: long tool results in {kept_from} messages elided"),
        },
        Entry::End { status, error } => match error {
            Some(error) => say!("── ended: {} ({error})", status.as_str()),
            None => say!("── ended: {}", status.as_str()),
        },
    }
}

fn print_message(who: &str, message: &Message) {
    for block in &message.content {
        match block {
            Block::Text { text } if !text.trim().is_empty() => {
                say!("{who}: {}", text.trim_end());
            }
            Block::ToolUse {
                name, arguments, ..
            } => say!("  → {name} {}", first_line(arguments, 200)),
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
                say!("  {mark} {}{more}", first_line(&text, 160));
            }
            _ => {}
        }
    }
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// `kaizen sessions rm`.
pub fn remove(name: &str) -> anyhow::Result<()> {
    let store = session::open_store()?;
    let id = store.resolve(name)?;
    store.remove(&id)?;
    println!("Removed session {id}.");
    Ok(())
}

/// `kaizen sessions prune`.
pub fn prune(older_than: Duration) -> anyhow::Result<()> {
    let removed = session::open_store()?.prune(older_than)?;
    match removed.len() {
        0 => println!("No session is that old."),
        n => println!("Removed {n} session(s): {}", removed.join(", ")),
    }
    Ok(())
}

/// `30d`, `12h`, `90m`, `45s` (or plain seconds) as a duration.
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let seconds_per = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => {
            return Err(format!(
                "`{text}` is not an age: use e.g. 30d, 12h, 90m or 45s"
            ));
        }
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not an age: use e.g. 30d, 12h, 90m or 45s"))?;
    Ok(Duration::from_secs(number.saturating_mul(seconds_per)))
}

/// `kaizen rewind`.
pub fn rewind(name: &str, to: u32, dry_run: bool, fork: bool) -> anyhow::Result<()> {
    let store = session::open_store()?;
    let id = store.resolve(name)?;
    let plan = store.rewind_plan(&id, u64::from(to))?;
    if plan.is_empty() {
        println!(
            "No file was changed by Write, Edit, MultiEdit or NotebookEdit from cycle {to} on; nothing to restore."
        );
    }
    for restore in &plan {
        let action = match restore.object {
            Some(_) => "restore",
            None => "remove (it did not exist)",
        };
        let verb = if dry_run { "would" } else { "will" };
        println!(
            "{verb} {action}: {} (first changed in cycle {})",
            restore.path.display(),
            restore.step
        );
    }
    if dry_run {
        return Ok(());
    }
    // Sessions from before files were kept with their directory are put
    // back beneath their workspace.
    let workspace = std::path::PathBuf::from(store.meta(&id)?.cwd);
    store.restore(&id, &plan, &workspace)?;
    if !plan.is_empty() {
        println!(
            "Restored {} file(s) as they were before cycle {to}. Files changed by Bash or other programs are not tracked.",
            plan.len()
        );
    }
    if fork {
        let forked = session::fork(&store, &id, Some(to.saturating_sub(1)))?;
        println!(
            "Forked session {} from {id} before cycle {to}; go on with: kaizen run --resume {}",
            forked.id, forked.id
        );
    }
    Ok(())
}

/// What `kaizen sessions compact` did, for the user; its exit code.
pub fn compacted_report(
    id: &str,
    compacted: Result<Option<Event>, String>,
    json: bool,
) -> Result<u8, kaizen_app::session_builder::SetupError> {
    let event = match compacted {
        Err(why) => return Err(anyhow::anyhow!("session {id} was not compacted: {why}").into()),
        Ok(None) => {
            eprintln!("kaizen: session {id} was not compacted (the notice above says why)");
            return Ok(1);
        }
        Ok(Some(event)) => event,
    };
    if json {
        println!("{}", serde_json::to_string(&event)?);
    } else if let Event::Compaction {
        tokens_before,
        tokens_after,
        replaced,
        cost_usd,
        ..
    } = &event
    {
        println!(
            "Compacted session {id}: {replaced} messages summarised; its next request is about {tokens_after} tokens (was {tokens_before}); the summary cost ${cost_usd:.4}."
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_take_a_unit() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_age("45"), Ok(Duration::from_secs(45)));
        assert!(parse_age("3w").unwrap_err().contains("30d"));
        assert!(parse_age("d").is_err());
    }
}
