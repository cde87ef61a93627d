//! The storage a [`SessionStore`](crate::SessionStore) keeps its bytes in:
//! the primitives only (documents read and replaced whole, logs appended
//! to, checkpoints by sequence number, kept contents by name).
//!
//! What the bytes mean is the store's business, not the storage's: the
//! store redacts secrets, compresses and checksums checkpoints, keeps the
//! last few, finds and cuts torn log lines and plans rewinds before and
//! after calling these. So a storage never sees a secret the store was told
//! about (except in files' kept contents, which rewind must give back byte
//! for byte), and it needs no knowledge of JSON or of the checkpoint
//! format.
//!
//! Ids reaching a storage are valid session ids (letters, digits, `-`, `_`
//! and `.`, not starting with `.`), and the store has checked that the
//! session exists before any call but [`Storage::create`] and
//! [`Storage::sessions`]. Errors are [`io::Error`]s: the store adds what
//! it was doing; a storage that is not a filesystem wraps its own errors
//! with [`io::Error::other`].

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// One thing kept for a session, to name it in messages: its path relative
/// to the session's directory is the filesystem layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// The session as a whole.
    Session,
    /// Its metadata document, `meta.json`.
    Meta,
    /// Its event log, `events.jsonl`.
    Log,
    /// Its checkpoint with this sequence number, `checkpoints/<seq>.ckpt`.
    Checkpoint(u64),
    /// The index of files' kept contents, `files/index.jsonl`.
    FileIndex,
    /// The kept content with this name, `files/objects/<name>`.
    Object(&'a str),
}

impl Item<'_> {
    /// Where the item is relative to its session's directory; none for the
    /// session itself.
    pub fn relative_path(&self) -> Option<PathBuf> {
        let path = match self {
            Item::Session => return None,
            Item::Meta => PathBuf::from("meta.json"),
            Item::Log => PathBuf::from("events.jsonl"),
            Item::Checkpoint(seq) => Path::new("checkpoints").join(format!("{seq:012}.ckpt")),
            Item::FileIndex => Path::new("files").join("index.jsonl"),
            Item::Object(name) => Path::new("files").join("objects").join(name),
        };
        Some(path)
    }
}

/// Where sessions' bytes are kept. [`FileStorage`](crate::FileStorage) is
/// the directory layout under `$KAIZEN_HOME/sessions`; a database can be
/// another.
///
/// Writes that replace something ([`Self::write_meta`],
/// [`Self::write_checkpoint`], [`Self::write_object`],
/// [`Self::truncate_log`]) must be atomic: after a crash a reader finds
/// the old bytes or the new ones, never a mix.
pub trait Storage: Send + Sync + fmt::Debug {
    /// Where the sessions are, for messages ([`SessionStore::root`](crate::SessionStore::root)):
    /// the root directory of a filesystem storage.
    fn location(&self) -> &Path;

    /// Where `item` of session `id` is, for messages and listings
    /// (checkpoints' `path`); by default the file layout under
    /// [`Self::location`].
    fn locate(&self, id: &str, item: Item<'_>) -> PathBuf {
        let dir = self.location().join(id);
        match item.relative_path() {
            Some(relative) => dir.join(relative),
            None => dir,
        }
    }

    /// Session `id`'s directory on this machine, when the storage keeps
    /// one: hooks read the log from it, and the cluster keeps its stream
    /// there. None by default.
    fn local_dir(&self, _id: &str) -> Option<PathBuf> {
        None
    }

    /// Whether session `id` exists: its metadata was written.
    fn exists(&self, id: &str) -> io::Result<bool> {
        Ok(self.read_meta(id)?.is_some())
    }

    /// The ids of the sessions kept, in any order; a name that cannot be
    /// an id may be among them (the store passes over it).
    fn sessions(&self) -> io::Result<Vec<String>>;

    /// Starts keeping session `id`, with metadata `meta`; an error of kind
    /// [`io::ErrorKind::AlreadyExists`] when it is kept already.
    fn create(&self, id: &str, meta: &[u8]) -> io::Result<()>;

    /// Session `id`'s metadata document, or none when there is no such
    /// session.
    fn read_meta(&self, id: &str) -> io::Result<Option<Vec<u8>>>;

    /// Replaces session `id`'s metadata document, atomically.
    fn write_meta(&self, id: &str, meta: &[u8]) -> io::Result<()>;

    /// Removes session `id` and everything kept for it.
    fn remove(&self, id: &str) -> io::Result<()>;

    /// Session `id`'s log as appended so far; empty when nothing was.
    fn read_log(&self, id: &str) -> io::Result<Vec<u8>>;

    /// Opens session `id`'s log for appending.
    fn open_log(&self, id: &str) -> io::Result<Box<dyn LogSink>>;

    /// Keeps the first `len` bytes of session `id`'s log, atomically.
    fn truncate_log(&self, id: &str, len: u64) -> io::Result<()>;

    /// The sequence numbers of session `id`'s checkpoints, ascending.
    fn checkpoints(&self, id: &str) -> io::Result<Vec<u64>>;

    /// Checkpoint `seq` of session `id`.
    fn read_checkpoint(&self, id: &str, seq: u64) -> io::Result<Vec<u8>>;

    /// Writes `bytes` as checkpoint `seq` of session `id`, atomically.
    fn write_checkpoint(&self, id: &str, seq: u64, bytes: &[u8]) -> io::Result<()>;

    /// Removes checkpoint `seq` of session `id`.
    fn remove_checkpoint(&self, id: &str, seq: u64) -> io::Result<()>;

    /// Session `id`'s index of kept contents as appended so far; empty when
    /// nothing was.
    fn read_file_index(&self, id: &str) -> io::Result<Vec<u8>>;

    /// Appends `line` (whole, newline included) to session `id`'s index of
    /// kept contents.
    fn append_file_index(&self, id: &str, line: &[u8]) -> io::Result<()>;

    /// Whether session `id` keeps a content named `name`.
    fn has_object(&self, id: &str, name: &str) -> io::Result<bool>;

    /// The content named `name` kept for session `id`.
    fn read_object(&self, id: &str, name: &str) -> io::Result<Vec<u8>>;

    /// Keeps `bytes` under `name` for session `id`, atomically.
    fn write_object(&self, id: &str, name: &str, bytes: &[u8]) -> io::Result<()>;
}

/// A session's log, open for appending.
pub trait LogSink: Send + Sync + fmt::Debug {
    /// Appends `bytes` (one or more whole lines) at once, so that a crash
    /// leaves every line before them whole and at most one torn line.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;

    /// Makes what was appended durable.
    fn sync(&mut self) -> io::Result<()>;
}
