//! Files' contents from before tools changed them, for `kaizen rewind`:
//! `files/objects/<BLAKE3>` holds each content once; `files/index.jsonl`
//! says, line by line, which step changed which path and what it held
//! before (or that it did not exist).
//!
//! Contents are kept byte for byte (never redacted): a rewind must give
//! back exactly what was there.

use super::beneath::Beneath;
use super::{Result, SessionStore, StoreError, atomic_write, create_private_dir, io_error};
use serde::{Deserialize, Serialize};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const DIR: &str = "files";
const INDEX: &str = "index.jsonl";
const OBJECTS: &str = "objects";

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
        let dir = self.dir(id)?.join(DIR);
        let objects = dir.join(OBJECTS);
        create_private_dir(&objects)?;
        let what = || format!("keeping {}", path.display());
        let content = Beneath::open(root)
            .and_then(|beneath| beneath.read(path))
            .map_err(io_error(what()))?;
        let object = match content {
            Some(content) => {
                let name = blake3::hash(&content).to_hex().to_string();
                let file = objects.join(&name);
                if !file.exists() {
                    atomic_write(&file, &content)?;
                }
                Some(name)
            }
            None => None,
        };
        let kept = Kept {
            step,
            root: Some(root.to_path_buf()),
            path: path.to_path_buf(),
            object,
        };
        let mut line = serde_json::to_vec(&kept).expect("an index line serializes");
        line.push(b'\n');
        let index = dir.join(INDEX);
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&index)
            .and_then(|mut file| file.write_all(&line))
            .map_err(io_error(format!("appending to {}", index.display())))
    }

    /// What rewinding session `id` to before step `to` restores: for each
    /// file changed at that step or later, its content before the first
    /// such change.
    pub fn rewind_plan(&self, id: &str, to: u64) -> Result<Vec<Restore>> {
        let index = self.dir(id)?.join(DIR).join(INDEX);
        let text = match fs::read_to_string(&index) {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(io_error(format!("reading {}", index.display()))(err)),
        };
        let mut plan: Vec<Restore> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            // A line cut by a crash names no content that was kept whole.
            let Ok(kept) = serde_json::from_str::<Kept>(line) else {
                if i + 1 == text.lines().count() {
                    continue;
                }
                return Err(StoreError::Corrupt(format!(
                    "line {} of {} is damaged",
                    i + 1,
                    index.display()
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
        let objects = self.dir(id)?.join(DIR).join(OBJECTS);
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
            let content = fs::read(objects.join(object)).map_err(io_error(format!(
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
