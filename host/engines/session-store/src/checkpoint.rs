//! Checkpoints: snapshots of a session's whole state, each kept by the
//! storage under a sequence number (`checkpoints/<seq>.ckpt` on disk), the
//! last few kept.
//!
//! Each is a checksummed header and the state as JSON, zstd-compressed
//! above a size (the bytes are `format.rs`'s job). The storage writes it atomically; reading
//! checks length and checksum, so a torn or corrupt one is found and the
//! one before it used, with a warning that says what was lost.

mod format;

use crate::storage::Item;
use crate::{Result, SessionStore, io_error};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// Retention and compression.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// How many checkpoints to keep per session.
    pub keep: usize,
    /// Above what size (bytes of JSON) to compress them.
    pub compress_above: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            keep: 5,
            compress_above: 64 << 10,
        }
    }
}

/// One checkpoint, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointInfo {
    /// Where it is (its file, for [`crate::FileStorage`]).
    pub path: PathBuf,
    /// The step its state is at, when the header could be read.
    pub step: Option<u64>,
    /// Its size as kept.
    pub bytes: u64,
}

/// A state read back from a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded<T> {
    /// The state.
    pub value: T,
    /// The step it is at.
    pub step: u64,
    /// Where it came from (its file, for [`crate::FileStorage`]).
    pub path: PathBuf,
}

/// What reading checkpoints found: the state, if any was good, and a
/// warning for each damaged one passed over.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery<T> {
    /// The newest good checkpoint that qualified.
    pub loaded: Option<Loaded<T>>,
    /// What was wrong with newer ones, and what that loses.
    pub warnings: Vec<String>,
}

impl SessionStore {
    /// Writes `state`, at `step`, as session `id`'s newest checkpoint, then
    /// deletes the oldest beyond the number kept. Returns the checkpoint's
    /// size.
    pub fn write_checkpoint<T: Serialize>(&self, id: &str, step: u64, state: &T) -> Result<u64> {
        let id = self.check(id)?;
        let json = self.to_json(state, "the session state")?;
        let compress = json.len() > self.checkpoint.compress_above;
        let bytes = format::encode(step, json, compress)?;
        let seqs = self.seqs(id)?;
        let next = seqs.last().map_or(1, |seq| seq + 1);
        self.storage
            .write_checkpoint(id, next, &bytes)
            .map_err(io_error(format!(
                "writing {}",
                self.at(id, Item::Checkpoint(next))
            )))?;
        let excess = (seqs.len() + 1).saturating_sub(self.checkpoint.keep);
        for &old in seqs.iter().take(excess) {
            self.remove_checkpoint(id, old)?;
        }
        Ok(bytes.len() as u64)
    }

    /// Session `id`'s checkpoints, oldest first.
    pub fn list_checkpoints(&self, id: &str) -> Result<Vec<CheckpointInfo>> {
        let id = self.check(id)?;
        let mut infos = Vec::new();
        for seq in self.seqs(id)? {
            let bytes = self.read_checkpoint(id, seq)?;
            infos.push(CheckpointInfo {
                step: format::header(&bytes).ok().map(|h| h.step),
                bytes: bytes.len() as u64,
                path: self.storage.locate(id, Item::Checkpoint(seq)),
            });
        }
        Ok(infos)
    }

    /// Removes session `id`'s checkpoints taken after `step` (those whose
    /// header cannot be read too: they cannot be placed).
    pub fn remove_checkpoints_after(&self, id: &str, step: u64) -> Result<()> {
        let id = self.check(id)?;
        for seq in self.seqs(id)? {
            let bytes = self.read_checkpoint(id, seq)?;
            let at = format::header(&bytes).ok().map(|h| h.step);
            if at.is_none_or(|at| at > step) {
                self.remove_checkpoint(id, seq)?;
            }
        }
        Ok(())
    }

    /// The newest good checkpoint of session `id`.
    pub fn load_latest<T: DeserializeOwned>(&self, id: &str) -> Result<Recovery<T>> {
        self.load_where(id, |_| true)
    }

    /// The newest good checkpoint of session `id` at `step` or before.
    pub fn load_at<T: DeserializeOwned>(&self, id: &str, step: u64) -> Result<Recovery<T>> {
        self.load_where(id, |at| at <= step)
    }

    /// The newest good checkpoint of session `id` whose step is `wanted`;
    /// each damaged one newer than it becomes a warning saying what is
    /// lost.
    fn load_where<T: DeserializeOwned>(
        &self,
        id: &str,
        wanted: impl Fn(u64) -> bool,
    ) -> Result<Recovery<T>> {
        let id = self.check(id)?;
        let mut damaged: Vec<String> = Vec::new();
        for seq in self.seqs(id)?.into_iter().rev() {
            let bytes = self.read_checkpoint(id, seq)?;
            let path = self.storage.locate(id, Item::Checkpoint(seq));
            match format::decode::<T>(&bytes) {
                Ok((step, _)) if !wanted(step) => continue,
                Ok((step, value)) => {
                    let warnings = damaged
                        .into_iter()
                        .map(|why| format!("{why}; using the checkpoint at step {step} instead, so what happened after it comes from the event log"))
                        .collect();
                    return Ok(Recovery {
                        loaded: Some(Loaded { value, step, path }),
                        warnings,
                    });
                }
                Err(why) => {
                    damaged.push(format!("checkpoint {} is damaged ({why})", path.display()))
                }
            }
        }
        let warnings = damaged
            .into_iter()
            .map(|why| format!("{why}; no older checkpoint is good, so the state is rebuilt from the event log alone"))
            .collect();
        Ok(Recovery {
            loaded: None,
            warnings,
        })
    }

    /// The sequence numbers of session `id`'s checkpoints, ascending.
    fn seqs(&self, id: &str) -> Result<Vec<u64>> {
        self.storage.checkpoints(id).map_err(io_error(format!(
            "listing the checkpoints of {}",
            self.at(id, Item::Session)
        )))
    }

    fn read_checkpoint(&self, id: &str, seq: u64) -> Result<Vec<u8>> {
        self.storage
            .read_checkpoint(id, seq)
            .map_err(io_error(format!(
                "reading {}",
                self.at(id, Item::Checkpoint(seq))
            )))
    }

    fn remove_checkpoint(&self, id: &str, seq: u64) -> Result<()> {
        self.storage
            .remove_checkpoint(id, seq)
            .map_err(io_error(format!(
                "removing {}",
                self.at(id, Item::Checkpoint(seq))
            )))
    }
}
