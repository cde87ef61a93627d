//! `kaizen sessions` and `kaizen rewind`: the sessions kept under
//! `$KAIZEN_HOME/sessions` ([`kaizen_app::sessions`]), read back for
//! people.

use kaizen_app::sessions;
use kaizen_app::transcript::{Listed, listed, transcript};
use kaizen_protocol::Event;
use std::time::Duration;

/// `kaizen sessions list`.
pub fn list(json: bool) -> anyhow::Result<()> {
    let sessions = sessions::list()?;
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
        let Listed { started, task } = listed(&meta);
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

/// `kaizen sessions show`: its log as JSON lines (a session another
/// runtime ran: its metadata), or its transcript with no control
/// character of what the model or a program wrote reaching the terminal.
pub fn show(name: &str, json: bool) -> anyhow::Result<()> {
    let shown = sessions::show(name)?;
    match &shown.log {
        Some(log) if json => {
            for record in &log.events {
                println!("{}", serde_json::to_string(record)?);
            }
        }
        None if json => println!("{}", serde_json::to_string(&shown.meta)?),
        _ => {
            for line in transcript(&shown) {
                println!("{}", crate::terminal::printable(&line));
            }
        }
    }
    if let Some(warning) = shown.log.and_then(|log| log.torn_tail) {
        eprintln!("kaizen: warning: {}", crate::terminal::printable(&warning));
    }
    Ok(())
}

/// `kaizen sessions rm`.
pub fn remove(name: &str) -> anyhow::Result<()> {
    let id = sessions::remove(name)?;
    println!("Removed session {id}.");
    Ok(())
}

/// `kaizen sessions prune`.
pub fn prune(older_than: Duration) -> anyhow::Result<()> {
    let removed = sessions::prune(older_than)?;
    match removed.len() {
        0 => println!("No session is that old."),
        n => println!("Removed {n} session(s): {}", removed.join(", ")),
    }
    Ok(())
}

/// `kaizen rewind`.
pub fn rewind(name: &str, to: u32, dry_run: bool, fork: bool) -> anyhow::Result<()> {
    let rewind = sessions::plan_rewind(name, to)?;
    if rewind.files.is_empty() {
        println!(
            "No file was changed by Write, Edit, MultiEdit or NotebookEdit from cycle {to} on; nothing to restore."
        );
    }
    let verb = if dry_run { "would" } else { "will" };
    for restore in &rewind.files {
        let action = match restore.object {
            Some(_) => "restore",
            None => "remove (it did not exist)",
        };
        println!(
            "{verb} {action}: {} (first changed in cycle {})",
            restore.path.display(),
            restore.step
        );
    }
    if dry_run {
        return Ok(());
    }
    rewind.restore()?;
    if !rewind.files.is_empty() {
        println!(
            "Restored {} file(s) as they were before cycle {to}. Files changed by Bash or other programs are not tracked.",
            rewind.files.len()
        );
    }
    if fork {
        let (id, forked) = (&rewind.id, rewind.fork()?);
        println!(
            "Forked session {forked} from {id} before cycle {to}; go on with: kaizen run --resume {forked}"
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
