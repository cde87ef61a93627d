//! What `kaizen run` was asked to do, as every front end that runs a
//! task on Kaizen's loop (or hands it elsewhere) receives it.

use crate::output::OutputFormat;
use kaizen_app::hosted::Hosted;
use kaizen_app::plugin_loading::Selection as PluginSelection;
use kaizen_app::session::{self, Choice, Continued};
use kaizen_app::session_builder::{SessionRequest, SetupError, Start, check_limits};
use std::path::PathBuf;

/// What `kaizen run` was asked to do.
pub struct RunOptions {
    /// The task; read from stdin when `None`.
    pub task: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--output-format`.
    pub format: OutputFormat,
    /// `--max-cycles`.
    pub max_cycles: u32,
    /// `--budget-usd`.
    pub budget_usd: f64,
    /// `--timeout` in seconds.
    pub timeout: Option<f64>,
    /// `--record FILE`.
    pub record: Option<PathBuf>,
    /// `--replay FILE`.
    pub replay: Option<PathBuf>,
    /// Workspace and plugins.
    pub plugins: PluginSelection,
    /// `--planner`.
    pub planner: Option<String>,
    /// A new session, `--resume` or `--fork`.
    pub session: Choice,
    /// `--permission-mode`, `--allowedTools`, `--disallowedTools`.
    pub permissions: crate::PermissionArgs,
    /// `--input-format stream-json`: messages as JSON lines on stdin, read
    /// while the run works.
    pub stream_input: bool,
    /// Compact the resumed session's conversation instead of running
    /// (`kaizen sessions compact`); `Some(true)` reports it as JSON.
    pub compact_only: Option<bool>,
    /// Set when a cluster's worker runs the turn.
    pub hosted: Option<Hosted>,
}

impl RunOptions {
    /// Refuses limits that cannot work, and a mode that does not exist.
    pub fn check_limits(&self) -> Result<(), SetupError> {
        check_limits(
            self.timeout,
            self.budget_usd,
            self.max_cycles,
            self.permissions.permission_mode.as_deref(),
        )
    }

    /// The first flag given that only Kaizen's loop on this machine
    /// honours (another runtime, or a cluster, cannot): `session`, when
    /// the caller counts the session's flag among them, first.
    pub fn local_only(&self, session: Option<&'static str>) -> Option<&'static str> {
        session.or_else(|| {
            [
                (self.stream_input, "--input-format stream-json"),
                (self.record.is_some(), "--record"),
                (self.replay.is_some(), "--replay"),
                (self.planner.is_some(), "--planner"),
                (self.provider.is_some(), "--provider"),
                (!self.plugins.plugins.is_empty(), "--plugin"),
                (!self.plugins.add_dirs.is_empty(), "--add-dir"),
            ]
            .into_iter()
            .find_map(|(used, flag)| used.then_some(flag))
        })
    }

    /// The session these options ask for, starting as `start`; memories
    /// are recalled for `recall_for` when given.
    pub fn request(&self, start: Start, recall_for: Option<String>) -> SessionRequest {
        SessionRequest {
            selection: self.plugins.clone(),
            permissions: self.permissions.clone(),
            model: self.model.clone(),
            provider: self.provider.clone(),
            replay: self.replay.clone(),
            record: self.record.clone(),
            planner: self.planner.clone(),
            max_cycles: self.max_cycles,
            budget_usd: self.budget_usd,
            timeout: self.timeout,
            start,
            recall_for,
        }
    }

    /// A continued session goes on where it was, with what it was using,
    /// unless the flags say otherwise; the user hears what it cannot get back.
    pub fn go_on_from(&mut self, continued: &Continued) {
        for warning in &continued.restored.warnings {
            eprintln!("kaizen: warning: {warning}");
        }
        for line in session::lost(continued) {
            eprintln!("kaizen: {line}");
        }
        self.model
            .get_or_insert_with(|| continued.meta.model.clone());
        self.plugins
            .cwd
            .get_or_insert_with(|| PathBuf::from(&continued.meta.cwd));
        if self.planner.is_none() {
            self.planner.clone_from(&continued.meta.planner);
        }
    }

    /// How the session starts: `continued`, or new with `task` (named as
    /// a cluster's turn names it, when a worker runs it).
    pub fn start(&self, continued: Option<Continued>, task: Option<&str>) -> Start {
        let hosted = self.hosted.as_ref();
        match continued {
            Some(continued) => Start::Continue {
                state: Box::new(continued.restored.state),
                seq: continued.restored.seq,
            },
            None => Start::New {
                id: hosted.map(|hosted| hosted.session_id.clone()),
                made_before: hosted.is_some_and(|hosted| hosted.made_before),
                task: task.unwrap_or_default().to_string(),
            },
        }
    }
}
