//! Keeping a file's content before a tool changes it, so the user can
//! rewind the change. Whoever keeps the session decides where the content
//! goes; a tool only holds a [`FileHistoryLink`].

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Keeps files' contents before they change.
pub trait FileHistory: Send + Sync {
    /// Keeps what `path` holds now (or that it does not exist). `root` is
    /// the writable directory `path` lies in: the file is read (and later
    /// restored) through that directory only, never through a path that
    /// has come to lead elsewhere.
    fn keep(&self, root: &Path, path: &Path) -> Result<(), String>;
}

/// A tool call's way to its session's file history; empty where nothing
/// is kept (`kaizen tools call`, a session without a store).
#[derive(Clone, Default)]
pub struct FileHistoryLink(Option<Arc<dyn FileHistory>>);

impl FileHistoryLink {
    /// A link to `history`.
    pub fn new(history: Arc<dyn FileHistory>) -> Self {
        Self(Some(history))
    }

    /// Keeps what `path` (beneath the writable directory `root`) holds
    /// now; without a history, nothing is kept and that is not an error.
    pub fn keep(&self, root: &Path, path: &Path) -> Result<(), String> {
        match &self.0 {
            Some(history) => history.keep(root, path),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for FileHistoryLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = if self.0.is_some() { "kept" } else { "none" };
        f.debug_tuple("FileHistoryLink").field(&kept).finish()
    }
}
