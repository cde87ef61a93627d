//! Which session a `kaizen run` works in: a new one, one resumed from the
//! store, or a fork of one; and the store it is kept in, configured from
//! `[sessions]` with every secret the host knows redacted.

use crate::config::{SessionsSection, kaizen_home};
use anyhow::Context as _;
use kaizen_loop::{
    CheckpointPolicy, Restored, SessionRecorder, SessionState, new_session_id, restore, restore_at,
};
use kaizen_protocol::Status;
use kaizen_session_store::{Parent, SessionMeta, SessionStore, now};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Environment variables that hold provider keys; their values are
/// redacted from everything the store writes.
pub(crate) const PROVIDER_KEYS: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// The sessions directory under `KAIZEN_HOME`.
pub fn open_store() -> anyhow::Result<SessionStore> {
    let root = kaizen_home()?.join("sessions");
    SessionStore::open(&root).with_context(|| format!("opening the sessions in {}", root.display()))
}

/// `store` with `[sessions]`' retention and compression, redacting the
/// values of the provider keys and of `secret_vars`.
pub fn configure(
    store: SessionStore,
    settings: &SessionsSection,
    secret_vars: &[String],
) -> SessionStore {
    let secrets = PROVIDER_KEYS
        .iter()
        .map(|name| name.to_string())
        .chain(secret_vars.iter().cloned())
        .filter_map(|name| std::env::var(name).ok());
    store
        .with_secrets(secrets)
        .with_checkpoints(settings.keep(), settings.compress_above_bytes())
}

/// The checkpoint policy `[sessions]` sets.
pub fn policy(settings: &SessionsSection) -> CheckpointPolicy {
    let default = CheckpointPolicy::default();
    CheckpointPolicy {
        every_cycles: settings
            .checkpoint_every_cycles
            .unwrap_or(default.every_cycles)
            .max(1),
        every: settings
            .checkpoint_every_seconds
            .map_or(default.every, Duration::from_secs_f64),
    }
}

/// How a run picks its session.
pub enum Choice {
    /// A new session.
    New,
    /// `--resume ID|last`.
    Resume(String),
    /// `--fork ID [--at CYCLE]`.
    Fork {
        /// The session forked.
        id: String,
        /// The cycle to fork after (`--at`; 0 is before the first model
        /// call); the session's end when `None`.
        at: Option<u32>,
    },
}

/// An existing session a run goes on from: its state and what the model
/// must be told first.
pub struct Continued {
    /// The session's id (a fork's new one).
    pub id: String,
    /// Its state.
    pub restored: Restored,
    /// Its metadata (a fork's own).
    pub meta: SessionMeta,
    /// What the model is told before the task: what did not survive.
    pub notice: String,
}

/// The session `choice` names, restored; `None` for a new one.
pub fn continue_from(store: &SessionStore, choice: &Choice) -> anyhow::Result<Option<Continued>> {
    match choice {
        Choice::New => Ok(None),
        Choice::Resume(name) => {
            let id = store.resolve(name)?;
            let restored = restore(store, &id)?;
            let meta = store.meta(&id)?;
            let how = match restored.state.status {
                Some(status) => format!("it ended {}", status.as_str()),
                None => "it was killed or crashed".to_string(),
            };
            let mut notice = format!("[Kaizen: this session was resumed; {how}. {GONE}]");
            if restored.state.messages.is_empty() {
                // Killed before its task reached the log: the metadata has it.
                notice = format!("{}\n\n{notice}", meta.task);
            }
            Ok(Some(Continued {
                id,
                restored,
                meta,
                notice,
            }))
        }
        Choice::Fork { id, at } => {
            let parent = store.resolve(id)?;
            let forked = fork(store, &parent, *at)?;
            let notice = format!(
                "[Kaizen: this session is a fork of session {parent} from cycle {}. {GONE}]",
                forked.restored.state.cycles
            );
            Ok(Some(Continued { notice, ..forked }))
        }
    }
}

/// What a resumed or forked session cannot get back.
const GONE: &str = "Programs started before, background shells included, are no longer \
    running, and the shell starts fresh in the workspace. Files may have changed since.";

/// A new session forked from `parent` as it was after cycle `at` (its
/// end when `None`), kept on its own from the start.
pub fn fork(store: &SessionStore, parent: &str, at: Option<u32>) -> anyhow::Result<Continued> {
    let mut restored = match at {
        Some(cycle) => restore_at(store, parent, cycle)?,
        None => restore(store, parent)?,
    };
    let parent_meta = store.meta(parent)?;
    let id = new_session_id();
    let state = &mut restored.state;
    state.session_id.clone_from(&id);
    state.status = None;
    let meta = SessionMeta {
        id: id.clone(),
        parent: Some(Parent {
            id: parent.to_string(),
            step: u64::from(state.cycles),
        }),
        started: now(),
        updated: now(),
        status: "forked".into(),
        cycles: state.cycles,
        cost_usd: state.cost_usd,
        // Its audit log is its own.
        audit_end: None,
        ..parent_meta
    };
    store.create(&meta)?;
    // The fork's first checkpoint holds everything from the parent, so it
    // does not depend on the parent's files.
    store.write_checkpoint(&id, 0, &*state)?;
    restored.seq = 0;
    Ok(Continued {
        id,
        restored,
        meta,
        notice: String::new(),
    })
}

/// Creates a new session's metadata for `task`.
pub fn create(
    store: &SessionStore,
    state: &SessionState,
    task: &str,
    cwd: &Path,
) -> anyhow::Result<()> {
    store.create(&SessionMeta::new(
        &state.session_id,
        task,
        &state.model,
        cwd.display().to_string(),
    ))?;
    Ok(())
}

/// The recorder for a session whose log ends at entry `seq`.
pub fn recorder(
    store: &SessionStore,
    state: &SessionState,
    seq: u64,
    policy: CheckpointPolicy,
) -> anyhow::Result<Arc<SessionRecorder>> {
    Ok(Arc::new(SessionRecorder::new(
        store.clone(),
        &state.session_id,
        seq,
        policy,
        state,
    )?))
}

/// Why a resumed session has nothing to do without a new task, if so.
pub fn nothing_to_do(continued: &Continued, task: Option<&str>) -> Option<String> {
    let state = &continued.restored.state;
    let finished = state.status == Some(Status::Complete) && state.unanswered_calls().is_empty();
    (finished && task.is_none()).then(|| {
        format!(
            "session {id} is complete; give it a task to go on: kaizen run --resume {id} \"what to do next\"",
            id = continued.id
        )
    })
}

/// What the user should hear of what a resumed or forked session cannot
/// get back (the model is told the same in its next message), one line
/// each.
pub fn lost(continued: &Continued) -> Vec<String> {
    let mut lines = Vec::new();
    let cut = continued.restored.state.unanswered_calls();
    if !cut.is_empty() {
        let names: Vec<&str> = cut.iter().map(|(_, name)| name.as_str()).collect();
        lines.push(format!(
            "{} call(s) of session {} were cut off when it stopped ({}); the model is told they may be partly done, and they are not run again by themselves",
            cut.len(),
            continued.id,
            names.join(", ")
        ));
    }
    lines.push(format!(
        "continuing session {}: programs it started before, background shells included, are gone",
        continued.id
    ));
    lines
}
