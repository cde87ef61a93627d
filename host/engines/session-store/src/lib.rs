//! Where sessions live. What a session keeps:
//!
//! - its metadata, what `kaizen sessions list` shows ([`SessionMeta`]);
//! - its append-only event log, one JSON value per line, written as the
//!   run goes (see [`log`]);
//! - checkpoints: snapshots of the whole state, checksummed, compressed
//!   above a size, the last few kept (see [`checkpoint`]);
//! - files' contents from before tools changed them, for rewind (see
//!   [`files`]).
//!
//! Two layers:
//!
//! - [`SessionStore`] is the policy: which ids are valid, secrets redacted
//!   from every byte before it is handed down, the checkpoint format
//!   (header, checksum, compression), how many checkpoints are kept, how a
//!   torn log line or a damaged checkpoint is recovered from, what a rewind
//!   restores (reading and writing the user's files beneath the directory
//!   they were found in);
//! - a [`Storage`] keeps the bytes: documents replaced atomically, logs
//!   appended to, checkpoints by sequence number, contents by name.
//!   [`FileStorage`] is the layout under `$KAIZEN_HOME/sessions/<id>/`
//!   (`meta.json`, `events.jsonl`, `checkpoints/`, `files/`), which
//!   [`SessionStore::open`] uses; [`SessionStore::new`] takes any other,
//!   such as a database.
//!
//! The store is generic over what it keeps; it knows nothing of the loop.
//! Every byte it hands its storage first has the configured secrets
//! replaced, so a provider key that slipped into a message is never kept;
//! files' earlier contents are the one exception, kept byte for byte so
//! that a rewind gives back exactly what was there.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod atomic;
mod beneath;
pub mod checkpoint;
mod file_storage;
pub mod files;
pub mod log;
mod meta;
mod redact;
pub mod storage;
mod store;

use serde::de::DeserializeOwned;
use std::io;
use std::path::PathBuf;

pub use checkpoint::{CheckpointInfo, Loaded, Recovery};
pub use file_storage::FileStorage;
pub use files::Restore;
pub use log::{EventsRead, LogWriter};
pub use meta::{LogEnd, Parent, SessionMeta};
pub use redact::REDACTED;
pub use storage::{Item, LogSink, Storage};
pub use store::SessionStore;

/// Why the store could not do something; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session has this id.
    #[error("no session `{id}` under {root}; `kaizen sessions list` shows them")]
    NotFound {
        /// The id asked for.
        id: String,
        /// The store's root.
        root: PathBuf,
    },
    /// The id cannot name a session directory.
    #[error(
        "`{0}` is not a session id: ids are letters, digits, `-`, `_` and `.` (not starting with `.`)"
    )]
    InvalidId(String),
    /// A session with this id exists already.
    #[error("a session `{0}` exists already")]
    Exists(String),
    /// The session is kept, but not in a directory on this machine.
    #[error("session `{id}` has no directory on this machine: it is kept in {storage}")]
    NotLocal {
        /// The session.
        id: String,
        /// Where its storage is.
        storage: PathBuf,
    },
    /// Something on disk is not what the store wrote.
    #[error("{0}")]
    Corrupt(String),
    /// The filesystem failed.
    #[error("{what}: {source}")]
    Io {
        /// What the store was doing.
        what: String,
        /// The error.
        source: io::Error,
    },
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// `source` while doing `what`.
pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> StoreError {
    let what = what.into();
    move |source| StoreError::Io { what, source }
}

/// Decodes JSON the store wrote; an error names `what` it was.
pub(crate) fn from_json<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|err| StoreError::Corrupt(format!("{what} does not decode: {err}")))
}

/// The current time in RFC 3339, for metadata.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whether `id` can name a session: a directory under the root and
/// nothing else, so every storage takes the same ids.
pub(crate) fn is_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests;
