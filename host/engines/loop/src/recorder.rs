//! Keeping a session in a [`SessionStore`] as it runs, and getting it back.
//!
//! A [`SessionRecorder`] is the loop's [`Journal`]: every entry goes to the
//! session's log as one numbered line as soon as it completes, the whole
//! state is checkpointed every so many cycles and seconds and always when
//! a run ends (interrupted included), and files are kept before tools
//! change them. [`restore`] rebuilds a session from its newest good
//! checkpoint and the log lines after it; [`restore_at`] rebuilds it as it
//! was after a given cycle, for forks.

use crate::checkpoint_writer::CheckpointWriter;
use crate::session_journal::{Entry, Journal};
use crate::state::SessionState;
use kaizen_hooks::HookEvent;
use kaizen_session_store::{EventsRead, LogWriter, Result, SessionStore, StoreError, now};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One line of a session's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogRecord {
    /// Its number: 1 for the session's first entry, one more for each.
    pub seq: u64,
    /// When it was written (RFC 3339).
    pub at: String,
    /// What happened.
    #[serde(flatten)]
    pub entry: Entry,
}

/// A [`LogRecord`] as written: the entry borrowed, not copied.
#[derive(Serialize)]
struct Line<'a> {
    seq: u64,
    at: String,
    #[serde(flatten)]
    entry: &'a Entry,
}

/// When to checkpoint besides the end of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointPolicy {
    /// After this many cycles since the last checkpoint.
    pub every_cycles: u32,
    /// After this much time since the last checkpoint (checked as entries
    /// arrive).
    pub every: Duration,
}

impl Default for CheckpointPolicy {
    fn default() -> Self {
        Self {
            every_cycles: 10,
            every: Duration::from_secs(60),
        }
    }
}

/// The loop's journal over a session store.
pub struct SessionRecorder {
    store: SessionStore,
    id: String,
    policy: CheckpointPolicy,
    inner: Mutex<Inner>,
    writer: CheckpointWriter,
}

struct Inner {
    log: LogWriter,
    seq: u64,
    checkpointed_cycles: u32,
    checkpointed_at: Instant,
    problems: Vec<String>,
}

impl SessionRecorder {
    /// Records session `id` (already created in `store`) from its log's
    /// entry `seq` on: 0 for a new session, the last entry's number for a
    /// resumed one.
    pub fn new(
        store: SessionStore,
        id: &str,
        seq: u64,
        policy: CheckpointPolicy,
        state: &SessionState,
    ) -> Result<Self> {
        let log = store.log_writer(id)?;
        Ok(Self {
            writer: CheckpointWriter::start(store.clone(), id.to_string()),
            store,
            id: id.to_string(),
            policy,
            inner: Mutex::new(Inner {
                log,
                seq,
                checkpointed_cycles: state.cycles,
                checkpointed_at: Instant::now(),
                problems: Vec::new(),
            }),
        })
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What could not be written, for the user (the run went on). Waits
    /// for checkpoints still being written.
    pub fn problems(&self) -> Vec<String> {
        self.writer.flush();
        let mut problems = self.lock().problems.clone();
        problems.extend(self.writer.problems());
        problems
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands a copy of `state` to the checkpoint thread.
    fn checkpoint(&self, inner: &mut Inner, state: &SessionState) {
        self.writer.write(inner.seq, state.clone());
        inner.checkpointed_cycles = state.cycles;
        inner.checkpointed_at = Instant::now();
    }

    fn write(&self, inner: &mut Inner, entry: &Entry, state: &SessionState) -> Result<()> {
        inner.seq += 1;
        inner.log.append(&Line {
            seq: inner.seq,
            at: now(),
            entry,
        })?;
        // A run's end is on disk before the run returns, and so is what
        // the SessionEnd hooks' completions (which run after it) cost.
        let closing = match entry {
            Entry::End { .. } => true,
            Entry::Hooks { event, .. } => event == HookEvent::SessionEnd.name(),
            _ => false,
        };
        if closing {
            inner.log.sync()?;
            self.checkpoint(inner, state);
            self.writer.flush();
        } else if matches!(entry, Entry::Start { .. }) {
            self.store
                .update_meta(&self.id, |meta| meta.status = "running".into())?;
        } else if self.due(inner, entry, state) {
            self.checkpoint(inner, state);
        }
        Ok(())
    }

    /// Whether `entry` ends a run or a step after which a checkpoint is
    /// due (every so many cycles or seconds).
    fn due(&self, inner: &Inner, entry: &Entry, state: &SessionState) -> bool {
        match entry {
            // What a resume reads back is much smaller after it.
            Entry::End { .. } | Entry::Compaction { .. } | Entry::Clear => true,
            Entry::Turn { .. } | Entry::Results { .. } => {
                state.cycles >= inner.checkpointed_cycles + self.policy.every_cycles
                    || inner.checkpointed_at.elapsed() >= self.policy.every
            }
            Entry::Start { .. }
            | Entry::User { .. }
            | Entry::Planner { .. }
            | Entry::Hooks { .. } => false,
        }
    }
}

impl Journal for SessionRecorder {
    fn record(&self, entry: &Entry, state: &SessionState) {
        let mut inner = self.lock();
        if let Err(err) = self.write(&mut inner, entry, state) {
            // The run goes on; the first failure of each kind is reported.
            let problem = format!("session {}: {err}", self.id);
            if !inner.problems.contains(&problem) {
                tracing::warn!("{problem}");
                inner.problems.push(problem);
            }
        }
    }

    fn takes_checkpoint(&self, entry: &Entry, state: &SessionState) -> bool {
        self.due(&self.lock(), entry, state)
    }

    fn flush(&self) {
        self.writer.flush();
    }

    fn keep_file(&self, step: u32, root: &Path, path: &Path) -> std::result::Result<(), String> {
        self.store
            .backup_file(&self.id, u64::from(step), root, path)
            .map_err(|err| err.to_string())
    }
}

/// A session rebuilt from its store.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The state.
    pub state: SessionState,
    /// The number of the last log entry it includes.
    pub seq: u64,
    /// What was damaged and what that lost.
    pub warnings: Vec<String>,
}

/// Session `id` as it was last recorded: the newest good checkpoint and
/// the log entries after it.
pub fn restore(store: &SessionStore, id: &str) -> Result<Restored> {
    restore_until(store, id, None)
}

/// Takes session `id` back to log entry `seq`: later entries and the
/// checkpoints taken after it go. A durable-execution engine that runs a
/// turn again from its start (its worker was lost) calls this first, so
/// the turn's entries are written once.
pub fn rewind_log(store: &SessionStore, id: &str, seq: u64) -> Result<()> {
    let EventsRead { events, .. } = store.read_events::<LogRecord>(id)?;
    let keep = events.iter().take_while(|record| record.seq <= seq).count();
    if keep < events.len() {
        store.truncate_log(id, keep)?;
    }
    store.remove_checkpoints_after(id, seq)
}

/// Session `id` as it was when cycle `cycle` had finished (its tool
/// results in): where a fork from that cycle starts.
pub fn restore_at(store: &SessionStore, id: &str, cycle: u32) -> Result<Restored> {
    restore_until(store, id, Some(cycle))
}

fn restore_until(store: &SessionStore, id: &str, cycle: Option<u32>) -> Result<Restored> {
    let meta = store.meta(id)?;
    let mut warnings = Vec::new();
    let EventsRead { events, torn_tail } = match store.read_events::<LogRecord>(id) {
        Ok(read) => read,
        Err(err @ StoreError::Corrupt(_)) => {
            warnings.push(format!(
                "{err}; the session continues from its newest checkpoint alone"
            ));
            EventsRead {
                events: Vec::new(),
                torn_tail: None,
            }
        }
        Err(err) => return Err(err),
    };
    warnings.extend(torn_tail);
    let last = match cycle {
        None => events.last().map_or(0, |r| r.seq),
        Some(cycle) => last_seq_of_cycle(&events, cycle).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "session {id} has no cycle {cycle}; `kaizen sessions show {id}` lists its cycles"
            ))
        })?,
    };
    let recovery = store.load_at::<SessionState>(id, last)?;
    warnings.extend(recovery.warnings);
    let (mut state, from) = match recovery.loaded {
        Some(loaded) => (loaded.value, loaded.step),
        None => (SessionState::new(id, &meta.model), 0),
    };
    let mut seq = from;
    for record in events.iter().filter(|r| r.seq > from && r.seq <= last) {
        if record.seq != seq + 1 {
            warnings.push(format!(
                "the log of session {id} skips from entry {seq} to {}; what happened between is lost",
                record.seq
            ));
        }
        state.apply(&record.entry);
        seq = record.seq;
    }
    Ok(Restored {
        state,
        seq,
        warnings,
    })
}

/// The last entry before cycle `cycle + 1` began, when cycle `cycle`
/// exists (0: before the first model call).
fn last_seq_of_cycle(events: &[LogRecord], cycle: u32) -> Option<u64> {
    let mut cycles = 0;
    let mut last = None;
    for record in events {
        match record.entry {
            Entry::Turn { .. } if cycles == cycle => return last,
            Entry::Turn { .. } => cycles += 1,
            // A fork continues the conversation; how the parent ended does
            // not carry over.
            Entry::End { .. } => continue,
            _ => {}
        }
        last = Some(record.seq);
    }
    (cycles == cycle).then_some(last).flatten()
}
