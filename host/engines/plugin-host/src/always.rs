//! The contract's host interfaces every plugin gets, whatever its grant:
//! `types`, `log` and `session` (which reaches only the notes of the
//! call's own session). Those that need a capability are in [`crate::caps`].

use crate::bindings::{log, session, types};
use crate::caps::filesystem::Access;
use crate::state::PluginState;
use std::path::{Component, Path, PathBuf};
use wasmtime::component::{HasSelf, Linker};

/// The interfaces linked into every plugin, without version.
pub(crate) const ALWAYS_LINKED: &[&str] = &[
    "kaizen:plugin/types",
    "kaizen:plugin/log",
    "kaizen:plugin/session",
];

/// Links the interfaces of [`ALWAYS_LINKED`].
pub(crate) fn link(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    types::add_to_linker::<_, HasSelf<PluginState>>(linker, |state| state)?;
    log::add_to_linker::<_, HasSelf<PluginState>>(linker, |state| state)?;
    session::add_to_linker::<_, HasSelf<PluginState>>(linker, |state| state)
}

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

impl session::Host for PluginState {
    async fn note_file(&mut self, path: String, record: session::FileRecord) {
        self.call.notes.note_file(
            path,
            kaizen_tools::FileRecord {
                hash: record.hash,
                mtime_ms: record.mtime_ms,
            },
        );
    }

    async fn file_note(&mut self, path: String) -> Option<session::FileRecord> {
        self.call
            .notes
            .file_note(&path)
            .map(|record| session::FileRecord {
                hash: record.hash,
                mtime_ms: record.mtime_ms,
            })
    }

    async fn todos(&mut self) -> String {
        serde_json::Value::Array(self.call.notes.todos()).to_string()
    }

    async fn set_todos(&mut self, todos: String) {
        // The contract asks for a JSON array; anything else would corrupt
        // the session's state, so it is dropped with a warning naming the
        // plugin (whose own result tells the model what it did).
        match serde_json::from_str(&todos) {
            Ok(serde_json::Value::Array(items)) => self.call.notes.set_todos(items),
            _ => tracing::warn!(
                plugin = &*self.name,
                "set-todos was given something other than a JSON array; the todo list is unchanged"
            ),
        }
    }

    async fn will_change(&mut self, path: String) -> Result<(), String> {
        let (root, path) = self.writable(&path)?;
        self.call.history.keep(&root, &path)
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
