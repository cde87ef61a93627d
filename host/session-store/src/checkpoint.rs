//! Checkpoints: snapshots of a session's whole state in `checkpoints/`,
//! one file each, named by a sequence number.
//!
//! A file is a 57-byte header (magic and version, a compression flag, the
//! step the state is at, the payload's length and its BLAKE3) and the
//! payload: the state as JSON, zstd-compressed above a size. It is written
//! atomically; reading checks length and checksum, so a torn or corrupt
//! file is found and the one before it used, with a warning that says what
//! was lost.

use super::{Result, SessionStore, StoreError, atomic_write, create_private_dir, io_error};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs;
use std::path::{Path, PathBuf};

const DIR: &str = "checkpoints";
const MAGIC: &[u8; 7] = b"KZCKPT\0";
const VERSION: u8 = 1;
const HEADER: usize = 7 + 1 + 1 + 8 + 8 + 32;
const RAW: u8 = 0;
const ZSTD: u8 = 1;
/// zstd's default level: fast, and about 5× smaller on conversations.
const ZSTD_LEVEL: i32 = 3;

/// Retention and compression.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub keep: usize,
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

/// One checkpoint file, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointInfo {
    /// Its file.
    pub path: PathBuf,
    /// The step its state is at, when the header could be read.
    pub step: Option<u64>,
    /// Its size on disk.
    pub bytes: u64,
}

/// A state read back from a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded<T> {
    /// The state.
    pub value: T,
    /// The step it is at.
    pub step: u64,
    /// The file it came from.
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
    /// deletes the oldest beyond the number kept. Returns the file's size.
    pub fn write_checkpoint<T: Serialize>(&self, id: &str, step: u64, state: &T) -> Result<u64> {
        let dir = self.dir(id)?.join(DIR);
        create_private_dir(&dir)?;
        let json = self.to_json(state, "the session state")?;
        let (flag, payload) = if json.len() > self.checkpoint.compress_above {
            let packed = zstd::bulk::compress(&json, ZSTD_LEVEL)
                .map_err(io_error("compressing a checkpoint"))?;
            (ZSTD, packed)
        } else {
            (RAW, json)
        };
        let mut bytes = Vec::with_capacity(HEADER + payload.len());
        bytes.extend_from_slice(MAGIC);
        bytes.push(VERSION);
        bytes.push(flag);
        bytes.extend_from_slice(&step.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
        bytes.extend_from_slice(&payload);
        let files = checkpoint_files(&dir)?;
        let next = files.last().map_or(1, |(seq, _)| seq + 1);
        atomic_write(&dir.join(format!("{next:012}.ckpt")), &bytes)?;
        let excess = (files.len() + 1).saturating_sub(self.checkpoint.keep);
        for (_, old) in files.iter().take(excess) {
            fs::remove_file(old).map_err(io_error(format!("removing {}", old.display())))?;
        }
        Ok(bytes.len() as u64)
    }

    /// Session `id`'s checkpoints, oldest first.
    pub fn list_checkpoints(&self, id: &str) -> Result<Vec<CheckpointInfo>> {
        let dir = self.dir(id)?.join(DIR);
        let mut infos = Vec::new();
        for (_, path) in checkpoint_files(&dir)? {
            let bytes = fs::read(&path).map_err(io_error(format!("reading {}", path.display())))?;
            infos.push(CheckpointInfo {
                step: header(&bytes).ok().map(|h| h.step),
                bytes: bytes.len() as u64,
                path,
            });
        }
        Ok(infos)
    }

    /// Removes session `id`'s checkpoints taken after `step` (those whose
    /// header cannot be read too: they cannot be placed).
    pub fn remove_checkpoints_after(&self, id: &str, step: u64) -> Result<()> {
        for info in self.list_checkpoints(id)? {
            if info.step.is_none_or(|at| at > step) {
                fs::remove_file(&info.path)
                    .map_err(io_error(format!("removing {}", info.path.display())))?;
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

    fn load_where<T: DeserializeOwned>(
        &self,
        id: &str,
        wanted: impl Fn(u64) -> bool,
    ) -> Result<Recovery<T>> {
        let dir = self.dir(id)?.join(DIR);
        let mut damaged: Vec<String> = Vec::new();
        for (_, path) in checkpoint_files(&dir)?.into_iter().rev() {
            let bytes = fs::read(&path).map_err(io_error(format!("reading {}", path.display())))?;
            match decode::<T>(&bytes) {
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
}

/// The checkpoint files in `dir` with their sequence numbers, in order;
/// none when the directory does not exist.
fn checkpoint_files(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io_error(format!("listing {}", dir.display()))(err)),
    };
    let mut files: Vec<(u64, PathBuf)> = entries
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let seq = path
                .file_name()?
                .to_str()?
                .strip_suffix(".ckpt")?
                .parse()
                .ok()?;
            Some((seq, path))
        })
        .collect();
    files.sort();
    Ok(files)
}

struct Header {
    compressed: bool,
    step: u64,
    length: u64,
    hash: [u8; 32],
}

fn header(bytes: &[u8]) -> std::result::Result<Header, String> {
    if bytes.len() < HEADER {
        return Err(format!(
            "truncated: {} bytes, shorter than its header",
            bytes.len()
        ));
    }
    if &bytes[..7] != MAGIC {
        return Err("not a Kaizen checkpoint (bad magic bytes)".into());
    }
    if bytes[7] != VERSION {
        return Err(format!(
            "format version {} is not the {VERSION} this Kaizen reads",
            bytes[7]
        ));
    }
    let compressed = match bytes[8] {
        RAW => false,
        ZSTD => true,
        other => return Err(format!("unknown compression flag {other}")),
    };
    let number = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    Ok(Header {
        compressed,
        step: number(9),
        length: number(17),
        hash: bytes[25..57].try_into().expect("32 bytes"),
    })
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> std::result::Result<(u64, T), String> {
    let header = header(bytes)?;
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != header.length {
        return Err(format!(
            "truncated: {} of {} payload bytes",
            payload.len(),
            header.length
        ));
    }
    if blake3::hash(payload).as_bytes() != &header.hash {
        return Err("checksum mismatch".into());
    }
    let json = if header.compressed {
        zstd::stream::decode_all(payload).map_err(|err| format!("does not decompress: {err}"))?
    } else {
        payload.to_vec()
    };
    let value = super::from_json(&json, "its state").map_err(|err: StoreError| err.to_string())?;
    Ok((header.step, value))
}
