//! The append-only event log, `events.jsonl`: one JSON value per line,
//! each written with a single `write` on a file opened for appending, so a
//! crash leaves every completed line and at most one torn last line.

use super::{Result, SessionStore, StoreError, from_json, io_error};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

pub(super) const LOG: &str = "events.jsonl";

/// The events read back from a log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventsRead<E> {
    /// Every complete event, in order.
    pub events: Vec<E>,
    /// What was wrong with the last line, when it was cut short by a
    /// crash and left out.
    pub torn_tail: Option<String>,
}

/// An open log to append to.
#[derive(Debug)]
pub struct LogWriter {
    file: File,
    path: PathBuf,
    store: SessionStore,
}

impl LogWriter {
    /// Appends `event` as one line.
    pub fn append<E: Serialize>(&mut self, event: &E) -> Result<()> {
        let mut line = self.store.to_json(event, "an event")?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(io_error(format!("appending to {}", self.path.display())))
    }

    /// Makes what was appended durable (for status changes).
    pub fn sync(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(io_error(format!("syncing {}", self.path.display())))
    }
}

impl SessionStore {
    /// Opens session `id`'s log for appending. A torn last line (see
    /// [`Self::read_events`]) is cut off first, so that the next line
    /// starts clean.
    pub fn log_writer(&self, id: &str) -> Result<LogWriter> {
        let path = self.dir(id)?.join(LOG);
        let what = || format!("opening {}", path.display());
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(io_error(what()))?;
        let bytes = fs::read(&path).map_err(io_error(what()))?;
        let sound = sound_length(&bytes);
        if sound < bytes.len() {
            file.set_len(sound as u64).map_err(io_error(what()))?;
        }
        Ok(LogWriter {
            file,
            path,
            store: self.clone(),
        })
    }

    /// Reads session `id`'s log. A last line that does not decode (a
    /// crash cut it) is left out and reported; a bad line before the last
    /// is corruption, and an error naming its line number.
    pub fn read_events<E: DeserializeOwned>(&self, id: &str) -> Result<EventsRead<E>> {
        let path = self.dir(id)?.join(LOG);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(err) => return Err(io_error(format!("reading {}", path.display()))(err)),
        };
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .collect();
        let complete = bytes.ends_with(b"\n");
        let mut events = Vec::with_capacity(lines.len());
        let mut torn_tail = None;
        for (i, line) in lines.iter().enumerate() {
            let last = i + 1 == lines.len();
            match from_json(line, "an event") {
                Ok(event) => events.push(event),
                Err(err) if last => {
                    let cut = if complete { "" } else { " (cut short)" };
                    torn_tail = Some(format!(
                        "the last line of {}{cut} was left out: {err}",
                        path.display()
                    ));
                }
                Err(err) => {
                    return Err(StoreError::Corrupt(format!(
                        "line {} of {} is damaged: {err}",
                        i + 1,
                        path.display()
                    )));
                }
            }
        }
        Ok(EventsRead { events, torn_tail })
    }

    /// Keeps only the first `keep` lines of session `id`'s log, replacing
    /// it at once: what a run that is run again from an earlier point
    /// (by a durable-execution engine) wrote after that point goes.
    pub fn truncate_log(&self, id: &str, keep: usize) -> Result<()> {
        let path = self.dir(id)?.join(LOG);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(io_error(format!("reading {}", path.display()))(err)),
        };
        let end = match keep {
            0 => 0,
            keep => bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(keep - 1)
                .map_or(bytes.len(), |(at, _)| at + 1),
        };
        if end < bytes.len() {
            super::atomic_write(&path, &bytes[..end])?;
        }
        Ok(())
    }
}

/// The length of `log` up to the end of its last line that is whole: ends
/// in a newline and holds JSON.
fn sound_length(log: &[u8]) -> usize {
    let body = log.strip_suffix(b"\n").unwrap_or(log);
    let start = body
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let last = &body[start..];
    let whole =
        log.ends_with(b"\n") && serde_json::from_slice::<serde::de::IgnoredAny>(last).is_ok();
    if whole || last.is_empty() {
        log.len()
    } else {
        start
    }
}
