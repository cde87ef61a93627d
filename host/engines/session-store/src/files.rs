//! Files' contents from before tools changed them, for `kaizen rewind`:
//! the storage keeps each content once, named by its BLAKE3
//! (`files/objects/<BLAKE3>` on disk), and an index (`files/index.jsonl`)
//! that says, line by line, which step changed which path and what it held
//! before (or that it did not exist).
//!
//! Contents are kept byte for byte (never redacted): a rewind must give
//! back exactly what was there. The user's files are read and put back
//! beneath the directory they were found in (`beneath.rs`) whatever the
//! storage: they are on this machine even when the session is not.

use crate::beneath::Beneath;
use crate::storage::Item;
use crate::{Result, SessionStore, StoreError, io_error};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One line of the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Kept {
    step: u64,
    /// The writable directory the file lies beneath: it is read and put
    /// back through that directory only. Absent in older sessions (their
    /// workspace is used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<PathBuf>,
    path: PathBuf,
    /// The content's object, or none when the file did not exist.
    object: Option<String>,
}

/// What rewinding puts back for one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Restore {
    /// The writable directory it is put back beneath, when the session
    /// recorded one.
    pub root: Option<PathBuf>,
    /// The file.
    pub path: PathBuf,
    /// The first step that changed it from then on.
    pub step: u64,
    /// Its content before that step, or none when it did not exist then
    /// (rewinding removes it).
    pub object: Option<String>,
}

impl SessionStore {
    /// Keeps what `path` holds now (or that it does not exist), before
    /// step `step` changes it. `path` is read beneath `root`, the writable
    /// directory it was found in: a path that leads out of it by now (a
    /// directory swapped for a link) is refused.
    pub fn backup_file(&self, id: &str, step: u64, root: &Path, path: &Path) -> Result<()> {
        let id = self.check(id)?;
        let content = Beneath::open(root)
            .and_then(|beneath| beneath.read(path))
            .map_err(io_error(format!("keeping {}", path.display())))?;
        let object = match content {
            Some(content) => Some(self.keep_object(id, &content)?),
            None => None,
        };
        let kept = Kept {
            step,
            root: Some(root.to_path_buf()),
            path: path.to_path_buf(),
            object,
        };
        let mut line = serde_json::to_vec(&kept).map_err(|err| {
            StoreError::Corrupt(format!("{} cannot be kept: {err}", path.display()))
        })?;
        line.push(b'\n');
        self.storage
            .append_file_index(id, &line)
            .map_err(io_error(format!(
                "appending to {}",
                self.at(id, Item::FileIndex)
            )))
    }

    /// Keeps `content` once, under its BLAKE3; its name.
    fn keep_object(&self, id: &str, content: &[u8]) -> Result<String> {
        let name = blake3::hash(content).to_hex().to_string();
        let what = || format!("writing {}", self.at(id, Item::Object(&name)));
        if !self
            .storage
            .has_object(id, &name)
            .map_err(io_error(what()))?
        {
            self.storage
                .write_object(id, &name, content)
                .map_err(io_error(what()))?;
        }
        Ok(name)
    }

    /// What rewinding session `id` to before step `to` restores: for each
    /// file changed at that step or later, its content before the first
    /// such change.
    pub fn rewind_plan(&self, id: &str, to: u64) -> Result<Vec<Restore>> {
        let id = self.check(id)?;
        let index = self.at(id, Item::FileIndex);
        let bytes = self
            .storage
            .read_file_index(id)
            .map_err(io_error(format!("reading {index}")))?;
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let lines: Vec<&[u8]> = if body.is_empty() {
            Vec::new()
        } else {
            body.split(|&b| b == b'\n').collect()
        };
        let mut plan: Vec<Restore> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            // A line cut by a crash names no content that was kept whole.
            let Ok(kept) = serde_json::from_slice::<Kept>(line) else {
                if i + 1 == lines.len() {
                    continue;
                }
                return Err(StoreError::Corrupt(format!(
                    "line {} of {index} is damaged",
                    i + 1,
                )));
            };
            if kept.step >= to && !plan.iter().any(|r| r.path == kept.path) {
                plan.push(Restore {
                    root: kept.root,
                    path: kept.path,
                    step: kept.step,
                    object: kept.object,
                });
            }
        }
        Ok(plan)
    }

    /// Puts back what `plan` says, byte for byte: each file is replaced
    /// atomically (keeping its permissions) or removed, beneath the
    /// directory it was kept under (`workspace` for sessions that did not
    /// record one), so that nothing is written or removed outside it even
    /// if a directory on the way became a link. Stops at the first
    /// failure, naming the file.
    pub fn restore(&self, id: &str, plan: &[Restore], workspace: &Path) -> Result<()> {
        let id = self.check(id)?;
        for restore in plan {
            let path = &restore.path;
            let root = restore.root.as_deref().unwrap_or(workspace);
            let beneath = Beneath::open(root).map_err(io_error(format!(
                "opening {} to restore into",
                root.display()
            )))?;
            let Some(object) = &restore.object else {
                beneath
                    .remove(path)
                    .map_err(io_error(format!("removing {}", path.display())))?;
                continue;
            };
            let content = self
                .storage
                .read_object(id, object)
                .map_err(io_error(format!(
                    "reading the kept content of {}",
                    path.display()
                )))?;
            if blake3::hash(&content).to_hex().as_str() != object {
                return Err(StoreError::Corrupt(format!(
                    "the kept content of {} is damaged (checksum mismatch); it was not restored",
                    path.display()
                )));
            }
            beneath
                .write(path, &content)
                .map_err(io_error(format!("restoring {}", path.display())))?;
        }
        Ok(())
    }
}
