//! Committing the entries that may checkpoint the session (a model turn,
//! a step's results, the end): `PreCheckpoint` hooks run before the
//! checkpoint is handed over, `PostCheckpoint` hooks once it is written
//! (the loop waits for the write only when one wants it).

use crate::hook_points::{HookPoint, fire};
use crate::session_journal::Entry;
use crate::turn::Turn;
use kaizen_hooks::HookEvent;

/// [`Turn::commit`] for an entry that may checkpoint the session, with
/// the checkpoint hooks around the write.
pub(crate) async fn commit_step(turn: &mut Turn<'_>, entry: Entry) {
    let hooks = &turn.guard.hooks;
    let watched = hooks.wants(HookEvent::PreCheckpoint) || hooks.wants(HookEvent::PostCheckpoint);
    let Some(journal) = turn.journal.filter(|_| watched) else {
        return turn.commit(entry);
    };
    turn.state.apply(&entry);
    let due = journal.takes_checkpoint(&entry, turn.state);
    let reason = if matches!(entry, Entry::End { .. }) {
        "end"
    } else {
        "periodic"
    };
    let cycle = turn.state.cycles;
    if due {
        fire(turn, HookPoint::PreCheckpoint { cycle, reason }).await;
    }
    crate::session_journal::record_outside_executor(journal.as_ref(), &entry, turn.state);
    if due && turn.guard.hooks.wants(HookEvent::PostCheckpoint) {
        let flushing = journal.clone();
        let _ = tokio::task::spawn_blocking(move || flushing.flush()).await;
        fire(turn, HookPoint::PostCheckpoint { cycle, reason }).await;
    }
}
