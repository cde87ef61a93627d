//! The append-only event log (`events.jsonl` on disk): one JSON value per
//! line, each handed to the storage in one append, so a crash leaves every
//! completed line and at most one torn last line, which is found and cut
//! here.

use crate::storage::{Item, LogSink};
use crate::{Result, SessionStore, StoreError, from_json, io_error};
use serde::Serialize;
use serde::de::DeserializeOwned;

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
    sink: Box<dyn LogSink>,
    path: String,
    store: SessionStore,
}

impl LogWriter {
    /// Appends `event` as one line.
    pub fn append<E: Serialize>(&mut self, event: &E) -> Result<()> {
        let mut line = self.store.to_json(event, "an event")?;
        line.push(b'\n');
        self.sink
            .append(&line)
            .map_err(io_error(format!("appending to {}", self.path)))
    }

    /// Makes what was appended durable (for status changes).
    pub fn sync(&mut self) -> Result<()> {
        self.sink
            .sync()
            .map_err(io_error(format!("syncing {}", self.path)))
    }
}

impl SessionStore {
    /// Opens session `id`'s log for appending. A torn last line (see
    /// [`Self::read_events`]) is cut off first, so that the next line
    /// starts clean.
    pub fn log_writer(&self, id: &str) -> Result<LogWriter> {
        let (id, path, bytes) = self.log_bytes(id)?;
        let what = || format!("opening {path}");
        let sound = sound_length(&bytes);
        if sound < bytes.len() {
            self.storage
                .truncate_log(id, sound as u64)
                .map_err(io_error(what()))?;
        }
        let sink = self.storage.open_log(id).map_err(io_error(what()))?;
        Ok(LogWriter {
            sink,
            path,
            store: self.clone(),
        })
    }

    /// Reads session `id`'s log. A last line that does not decode (a
    /// crash cut it) is left out and reported; a bad line before the last
    /// is corruption, and an error naming its line number.
    pub fn read_events<E: DeserializeOwned>(&self, id: &str) -> Result<EventsRead<E>> {
        let (_, path, bytes) = self.log_bytes(id)?;
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
                    torn_tail = Some(format!("the last line of {path}{cut} was left out: {err}"));
                }
                Err(err) => {
                    return Err(StoreError::Corrupt(format!(
                        "line {} of {path} is damaged: {err}",
                        i + 1,
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
        let (id, path, bytes) = self.log_bytes(id)?;
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
            self.storage
                .truncate_log(id, end as u64)
                .map_err(io_error(format!("writing {path}")))?;
        }
        Ok(())
    }

    /// Session `id` (which must exist), where its log is (for messages)
    /// and the log's bytes as stored.
    fn log_bytes<'i>(&self, id: &'i str) -> Result<(&'i str, String, Vec<u8>)> {
        let id = self.check(id)?;
        let path = self.at(id, Item::Log);
        let bytes = self
            .storage
            .read_log(id)
            .map_err(io_error(format!("reading {path}")))?;
        Ok((id, path, bytes))
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
