//! The session's shared notes: what the session's tools read or wrote, and
//! its todo list. The host keeps them in the session's state (so they
//! survive checkpoints and reach every plugin of the session); the
//! interface is always granted.
//!
//! The note-keeping functions call the host, so they only work inside a
//! component (on a native target they panic). [`fingerprint`] and
//! [`FileRecord`] are plain Rust and work anywhere, which is what lets a
//! plugin test its read-before-write logic natively.
//!
//! Every plugin that notes files should fingerprint them with this module,
//! so that a file noted by one plugin (`Read`) compares equal in another
//! (`Write`, `Edit`).
//!
//! ```no_run
//! use kaizen_sdk::session;
//! use std::path::Path;
//!
//! let path = Path::new("/workspace/src/main.rs");
//! let seen = session::fingerprint(path)?;
//! session::note_file(path, &seen);
//! // ... later, maybe in another plugin:
//! let now = session::fingerprint(path)?;
//! let unchanged = session::file_note(path).is_some_and(|note| note.same_content(&now));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde_json::Value;

use crate::bindings::kaizen::plugin::session as host;

/// What a tool saw of a file when it read or wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileRecord {
    /// BLAKE3 of the content, in lowercase hex.
    pub hash: String,
    /// Modification time, in milliseconds since the Unix epoch (0 when the
    /// filesystem does not say).
    pub mtime_ms: u64,
}

impl FileRecord {
    /// The record of `content` with modification time `mtime_ms`.
    pub fn of_bytes(content: &[u8], mtime_ms: u64) -> Self {
        Self {
            hash: blake3::hash(content).to_hex().to_string(),
            mtime_ms,
        }
    }

    /// Whether both records saw the same content. The modification time
    /// alone does not count: a file touched but not changed still holds
    /// what the tool saw.
    pub fn same_content(&self, other: &FileRecord) -> bool {
        self.hash == other.hash
    }
}

/// Hashes the file at `path` (streamed, so any size works) and reads its
/// modification time.
pub fn fingerprint(path: &Path) -> io::Result<FileRecord> {
    let mut file = File::open(path)?;
    let mtime_ms = mtime_ms(&file.metadata()?);
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buf[..n]);
    }
    Ok(FileRecord {
        hash: hasher.finalize().to_hex().to_string(),
        mtime_ms,
    })
}

/// The modification time in `meta`, in milliseconds since the Unix epoch
/// (0 when it is unknown or before the epoch).
pub fn mtime_ms(meta: &Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_millis() as u64)
}

/// Records what this tool saw of the file at `path` (absolute), replacing
/// any earlier note.
pub fn note_file(path: &Path, record: &FileRecord) {
    host::note_file(
        &path.to_string_lossy(),
        &host::FileRecord {
            hash: record.hash.clone(),
            mtime_ms: record.mtime_ms,
        },
    );
}

/// The session's last note for the file at `path` (absolute), if any of its
/// tools read or wrote it.
pub fn file_note(path: &Path) -> Option<FileRecord> {
    host::file_note(&path.to_string_lossy()).map(|record| FileRecord {
        hash: record.hash,
        mtime_ms: record.mtime_ms,
    })
}

/// The session's todo list, one JSON value per item (empty when there is
/// none).
pub fn todos() -> Vec<Value> {
    match serde_json::from_str(&host::todos()) {
        Ok(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

/// Replaces the session's todo list.
pub fn set_todos(todos: &[Value]) {
    host::set_todos(&Value::from(todos).to_string());
}

/// Tells the host that this tool is about to change or create the file at
/// `path` (absolute), so that it keeps the current content for
/// `kaizen rewind`. Call it right before writing. An error says why the
/// content was not kept (e.g. the file is outside the plugin's writable
/// directories); the write may still go ahead.
pub fn will_change(path: &Path) -> Result<(), String> {
    host::will_change(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_fingerprint_hashes_its_content_and_reads_its_mtime() {
        let dir = std::env::temp_dir().join(format!("kaizen-sdk-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        // More than one read buffer, so the streaming is exercised.
        let content = "line\n".repeat(30_000);
        std::fs::write(&path, &content).unwrap();
        let record = fingerprint(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(
            record,
            FileRecord::of_bytes(content.as_bytes(), mtime_ms(&meta))
        );
        assert!(record.mtime_ms > 0);
        assert_eq!(record.hash.len(), 64);
        let other = FileRecord::of_bytes(b"other", record.mtime_ms);
        assert!(!record.same_content(&other));
        let touched = FileRecord::of_bytes(content.as_bytes(), record.mtime_ms + 5);
        assert!(record.same_content(&touched));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
