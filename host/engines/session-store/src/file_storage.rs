//! [`FileStorage`]: sessions as directories under one root, in the layout
//! [`Item::relative_path`] gives (`meta.json`, `events.jsonl`,
//! `checkpoints/<seq>.ckpt`, `files/index.jsonl`, `files/objects/<name>`).
//!
//! Every path is built from a checked id and name, so nothing is read or
//! written outside the root whatever the caller passes; replacing writes go
//! through [`atomic_write`], and the directories the store adds are
//! readable only by their owner.

use crate::atomic::{atomic_write, create_private_dir};
use crate::storage::{Item, LogSink, Storage};
use crate::{Result, io_error, is_session_id};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Sessions kept as directories under a root directory
/// (`$KAIZEN_HOME/sessions`).
#[derive(Debug, Clone)]
pub struct FileStorage {
    root: PathBuf,
}

impl FileStorage {
    /// The storage at `root`, created if missing, readable only by its
    /// owner.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self> {
        let root = root.into();
        create_private_dir(&root).map_err(io_error(format!("creating {}", root.display())))?;
        Ok(Self { root })
    }

    /// Where `item` of session `id` is; an error when the id or the
    /// object's name could lead out of the root.
    fn path(&self, id: &str, item: Item<'_>) -> io::Result<PathBuf> {
        if !is_session_id(id) {
            return Err(refused(format!("`{id}` is not a session id")));
        }
        if let Item::Object(name) = item
            && (name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            return Err(refused(format!("`{name}` is not a kept content's name")));
        }
        Ok(self.locate(id, item))
    }

    /// Where `item` of session `id` is, the directory it lies in created
    /// (readable only by its owner) when missing.
    fn made_path(&self, id: &str, item: Item<'_>) -> io::Result<PathBuf> {
        let path = self.path(id, item)?;
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        Ok(path)
    }
}

fn refused(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

/// `path`'s content, or none when it does not exist.
fn read_if_any(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

fn append_to(path: &Path, bytes: &[u8]) -> io::Result<()> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(bytes)
}

impl Storage for FileStorage {
    fn location(&self) -> &Path {
        &self.root
    }

    fn local_dir(&self, id: &str) -> Option<PathBuf> {
        self.path(id, Item::Session).ok()
    }

    fn exists(&self, id: &str) -> io::Result<bool> {
        Ok(self.path(id, Item::Meta)?.is_file())
    }

    fn sessions(&self) -> io::Result<Vec<String>> {
        let mut ids = Vec::new();
        for entry in fs::read_dir(&self.root)? {
            if let Ok(name) = entry?.file_name().into_string()
                && is_session_id(&name)
            {
                ids.push(name);
            }
        }
        Ok(ids)
    }

    fn create(&self, id: &str, meta: &[u8]) -> io::Result<()> {
        // Not private: the root already is, and sessions made before kept
        // the default mode.
        fs::create_dir(self.path(id, Item::Session)?)?;
        atomic_write(&self.path(id, Item::Meta)?, meta)
    }

    fn read_meta(&self, id: &str) -> io::Result<Option<Vec<u8>>> {
        read_if_any(&self.path(id, Item::Meta)?)
    }

    fn write_meta(&self, id: &str, meta: &[u8]) -> io::Result<()> {
        atomic_write(&self.path(id, Item::Meta)?, meta)
    }

    fn remove(&self, id: &str) -> io::Result<()> {
        fs::remove_dir_all(self.path(id, Item::Session)?)
    }

    fn read_log(&self, id: &str) -> io::Result<Vec<u8>> {
        Ok(read_if_any(&self.path(id, Item::Log)?)?.unwrap_or_default())
    }

    fn open_log(&self, id: &str) -> io::Result<Box<dyn LogSink>> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(id, Item::Log)?)?;
        Ok(Box::new(FileLog { file }))
    }

    fn truncate_log(&self, id: &str, len: u64) -> io::Result<()> {
        let path = self.path(id, Item::Log)?;
        let Some(bytes) = read_if_any(&path)? else {
            return Ok(());
        };
        // A rewrite rather than `set_len`, so that a crash never leaves a
        // log cut anywhere but where asked.
        match usize::try_from(len) {
            Ok(len) if len < bytes.len() => atomic_write(&path, &bytes[..len]),
            _ => Ok(()),
        }
    }

    fn checkpoints(&self, id: &str) -> io::Result<Vec<u64>> {
        // The directory any checkpoint lies in, so that the layout is
        // spelled in one place.
        let any = self.path(id, Item::Checkpoint(0))?;
        let dir = any.parent().unwrap_or(&self.root);
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let mut seqs: Vec<u64> = entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".ckpt")?.parse().ok()
            })
            .collect();
        seqs.sort_unstable();
        Ok(seqs)
    }

    fn read_checkpoint(&self, id: &str, seq: u64) -> io::Result<Vec<u8>> {
        fs::read(self.path(id, Item::Checkpoint(seq))?)
    }

    fn write_checkpoint(&self, id: &str, seq: u64, bytes: &[u8]) -> io::Result<()> {
        atomic_write(&self.made_path(id, Item::Checkpoint(seq))?, bytes)
    }

    fn remove_checkpoint(&self, id: &str, seq: u64) -> io::Result<()> {
        fs::remove_file(self.path(id, Item::Checkpoint(seq))?)
    }

    fn read_file_index(&self, id: &str) -> io::Result<Vec<u8>> {
        Ok(read_if_any(&self.path(id, Item::FileIndex)?)?.unwrap_or_default())
    }

    fn append_file_index(&self, id: &str, line: &[u8]) -> io::Result<()> {
        append_to(&self.made_path(id, Item::FileIndex)?, line)
    }

    fn has_object(&self, id: &str, name: &str) -> io::Result<bool> {
        self.path(id, Item::Object(name))?.try_exists()
    }

    fn read_object(&self, id: &str, name: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path(id, Item::Object(name))?)
    }

    fn write_object(&self, id: &str, name: &str, bytes: &[u8]) -> io::Result<()> {
        atomic_write(&self.made_path(id, Item::Object(name))?, bytes)
    }
}

/// A log file open for appending: each append is one `write` on a file
/// opened with `O_APPEND`, so lines are never interleaved or overwritten.
#[derive(Debug)]
struct FileLog {
    file: File,
}

impl LogSink for FileLog {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}
