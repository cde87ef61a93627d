//! The contract's host interfaces `log`, `session`, `interaction` and
//! `agent` (`process` is in `process_host`, `llm` in `llm_host`).

use crate::bindings::{agent, interaction, log, session, types};
use crate::capability::Access;
use crate::state::PluginState;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// Longest a question to the user may stay unanswered.
const ASK_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl types::Host for PluginState {}

impl log::Host for PluginState {
    async fn log(&mut self, level: types::LogLevel, message: String) {
        let plugin = &*self.name;
        match level {
            types::LogLevel::Trace => tracing::trace!(plugin, "{message}"),
            types::LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            types::LogLevel::Info => tracing::info!(plugin, "{message}"),
            types::LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            types::LogLevel::Error => tracing::error!(plugin, "{message}"),
        }
    }
}

impl interaction::Host for PluginState {
    async fn ask(
        &mut self,
        questions: Vec<interaction::Question>,
    ) -> Result<Vec<interaction::Answer>, interaction::InteractionError> {
        if let Some(problem) = invalid_questions(&questions) {
            return Err(interaction::InteractionError::Invalid(problem));
        }
        let handler = self.interaction.clone();
        // Waiting for a person is not the plugin's time.
        self.clock.begin_wait();
        let answer = tokio::time::timeout(ASK_TIMEOUT, handler.ask(&self.name, questions)).await;
        self.clock.end_wait();
        answer.unwrap_or(Err(interaction::InteractionError::NoUser))
    }

    async fn progress(&mut self, message: String, fraction: Option<f32>) {
        let fraction = fraction.map(|f| f.clamp(0.0, 1.0));
        self.interaction.progress(&self.name, &message, fraction);
    }
}

fn invalid_questions(questions: &[interaction::Question]) -> Option<String> {
    if !(1..=4).contains(&questions.len()) {
        return Some(format!(
            "ask takes 1 to 4 questions, got {}",
            questions.len()
        ));
    }
    questions.iter().find_map(|q| {
        (!(2..=4).contains(&q.options.len())).then(|| {
            format!(
                "question `{}` has {} options; give 2 to 4",
                q.header,
                q.options.len()
            )
        })
    })
}

impl session::Host for PluginState {
    async fn note_file(&mut self, path: String, record: session::FileRecord) {
        self.notes.note_file(
            path,
            kaizen_tools::FileRecord {
                hash: record.hash,
                mtime_ms: record.mtime_ms,
            },
        );
    }

    async fn file_note(&mut self, path: String) -> Option<session::FileRecord> {
        self.notes
            .file_note(&path)
            .map(|record| session::FileRecord {
                hash: record.hash,
                mtime_ms: record.mtime_ms,
            })
    }

    async fn todos(&mut self) -> String {
        serde_json::Value::Array(self.notes.todos()).to_string()
    }

    async fn set_todos(&mut self, todos: String) {
        // The contract asks for a JSON array; anything else would corrupt
        // the session's state, so it is dropped with a warning naming the
        // plugin (whose own result tells the model what it did).
        match serde_json::from_str(&todos) {
            Ok(serde_json::Value::Array(items)) => self.notes.set_todos(items),
            _ => tracing::warn!(
                plugin = &*self.name,
                "set-todos was given something other than a JSON array; the todo list is unchanged"
            ),
        }
    }

    async fn will_change(&mut self, path: String) -> Result<(), String> {
        let (root, path) = self.writable(&path)?;
        self.history.keep(&root, &path)
    }
}

impl PluginState {
    /// `path` when the plugin may write it: absolute, and inside one of
    /// its read-write directories once symlinks are resolved, so that a
    /// link cannot make the host copy a file from elsewhere into the
    /// session; with that directory (canonical), beneath which the host
    /// then reads it.
    fn writable(&self, path: &str) -> Result<(PathBuf, PathBuf), String> {
        let path = Path::new(path);
        if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
            return Err(format!(
                "`{}` is not an absolute path without `..`",
                path.display()
            ));
        }
        // A file about to be created does not exist yet: resolve the
        // deepest ancestor that does.
        let resolved = path
            .ancestors()
            .find_map(|dir| {
                let real = dir.canonicalize().ok()?;
                Some(real.join(path.strip_prefix(dir).ok()?))
            })
            .ok_or_else(|| format!("`{}` cannot be resolved", path.display()))?;
        let inside = self.grant.filesystem.iter().find_map(|dir| {
            let root = dir.path.canonicalize().ok()?;
            (dir.access == Access::ReadWrite && resolved.starts_with(&root)).then_some(root)
        });
        if let Some(root) = inside {
            Ok((root, resolved))
        } else {
            Err(format!(
                "`{}` is outside the directories this plugin may write; its content was not kept",
                path.display()
            ))
        }
    }
}

impl agent::Host for PluginState {
    async fn run(&mut self, req: agent::AgentRequest) -> Result<agent::AgentResult, String> {
        let request = kaizen_tools::SubAgentRequest {
            description: req.description,
            prompt: req.prompt,
            subagent_type: req.subagent_type,
        };
        let run = self.sub_agents.run(&self.call_id, request);
        // The sub-agent's time is bounded by the session, not the plugin's
        // CPU allowance.
        self.clock.begin_wait();
        let report = run.await;
        self.clock.end_wait();
        let report = report?;
        Ok(agent::AgentResult {
            output: report.output,
            status: report.status,
            error: report.error,
            cycles: report.cycles,
            cost_usd: report.cost_usd,
            tool_calls: report.tool_calls,
        })
    }
}
