//! What `kaizen run` was asked to do, as every front end that runs a
//! task on Kaizen's loop (or hands it elsewhere) receives it: the
//! library's request ([`RunRequest`]) with what only the command line
//! knows, where the task comes from and how the run is shown.

use crate::output::OutputFormat;
use kaizen_app::plugin_loading::Selection as PluginSelection;
use kaizen_app::run::RunRequest;
use kaizen_app::session::Choice;
use kaizen_app::session_builder::{SetupError, check_limits};
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
    /// `--include-partial-messages`.
    pub partial_messages: bool,
    /// `--system-prompt`: instead of Kaizen's own (empty keeps it).
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`.
    pub append_system_prompt: Option<String>,
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
}

/// Where `kaizen run` reads its task from.
pub struct TaskFrom {
    /// The task given as an argument; else stdin.
    pub argument: Option<String>,
    /// `--input-format stream-json`: the first message on stdin.
    pub stream_json: bool,
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
                (
                    self.system_prompt
                        .as_ref()
                        .is_some_and(|text| !text.trim().is_empty()),
                    "--system-prompt",
                ),
                (
                    self.append_system_prompt.is_some(),
                    "--append-system-prompt",
                ),
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

    /// The library's request for Kaizen's loop, and where the task comes
    /// from (the output format and a compaction are the caller's to read
    /// first).
    pub fn into_request(self) -> (RunRequest, TaskFrom) {
        let request = RunRequest {
            model: self.model,
            provider: self.provider,
            max_cycles: self.max_cycles,
            budget_usd: self.budget_usd,
            timeout: self.timeout,
            record: self.record,
            replay: self.replay,
            selection: self.plugins,
            planner: self.planner,
            session: self.session,
            permissions: self.permissions,
            // A cluster's worker builds its turns' requests itself.
            hosted: None,
        };
        let from = TaskFrom {
            argument: self.task,
            stream_json: self.stream_input,
        };
        (request, from)
    }
}
