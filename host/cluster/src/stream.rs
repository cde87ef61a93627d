//! A session's events as its turn runs, for whoever submitted the turn.
//!
//! The worker running a turn appends each of the loop's events to
//! `stream.jsonl` in the session's directory of the shared store, as one
//! line tagged with the turn and the event's number within the turn. A
//! turn run again after its worker was lost numbers its events from zero
//! again and repeats the ones already written (its steps come back from
//! the journal), so a reader shows each number once. What happens inside
//! a step is not repeated by a step the journal gives back, and is not
//! numbered (see [`within_a_step`]).

use kaizen_runtime::session_store::SessionStore;
use kaizen_runtime::{Event, Observer};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file, in a session's directory, that holds the stream.
pub const STREAM_FILE: &str = "stream.jsonl";

/// One line of the stream.
#[derive(Serialize, Deserialize)]
struct Line<E> {
    /// The turn, as its submitter named it.
    turn: String,
    /// The event's number within this run of the turn, from zero.
    n: u64,
    event: E,
}

/// Where session `id`'s stream is (or will be: the worker makes the
/// session).
pub fn stream_path(store: &SessionStore, id: &str) -> PathBuf {
    store.root().join(id).join(STREAM_FILE)
}

/// Appends a turn's events to its session's stream: the worker's
/// observer of the loop. Secrets the store knows are redacted, as in
/// everything else the store keeps.
pub struct EventStream {
    store: SessionStore,
    turn: String,
    open: Mutex<Open>,
}

/// The stream's file, and the number the next numbered event takes.
struct Open {
    file: File,
    next: u64,
}

impl EventStream {
    /// The stream of session `id` (whose directory exists), for `turn`.
    pub fn open(store: &SessionStore, id: &str, turn: &str) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(
            store
                .dir(id)
                .map_err(std::io::Error::other)?
                .join(STREAM_FILE),
        )?;
        Ok(Self {
            store: store.clone(),
            turn: turn.to_string(),
            open: Mutex::new(Open { file, next: 0 }),
        })
    }
}

impl Observer for EventStream {
    fn on_event(&self, event: &Event) {
        let mut stream = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let line = Line {
            turn: self.turn.clone(),
            n: stream.next,
            event,
        };
        if !within_a_step(event) {
            stream.next += 1;
        }
        // A line that cannot be written costs the watcher that event, not
        // the run: the log and the result still have everything.
        let written = self
            .store
            .to_json(&line, "an event")
            .map_err(|err| err.to_string())
            .and_then(|mut bytes| {
                bytes.push(b'\n');
                stream.file.write_all(&bytes).map_err(|err| err.to_string())
            });
        if let Err(err) = written {
            tracing::warn!("writing the session's event stream: {err}");
        }
    }
}

/// Whether `event` happens inside a step (a model call's streamed text
/// and retries, what a tool does while it runs): a step that comes back
/// from the journal does not repeat these, so they are not numbered; they
/// take the number of the next numbered event, and show only when that
/// number is new.
fn within_a_step(event: &Event) -> bool {
    matches!(
        event,
        Event::TextDelta { .. }
            | Event::Retry { .. }
            | Event::Fallback { .. }
            | Event::PluginCompletion { .. }
            | Event::SubAgent { .. }
    )
}

/// Follows one turn's events in a session's stream.
pub struct StreamReader {
    path: PathBuf,
    turn: String,
    offset: u64,
    /// What was read past the last whole line.
    partial: Vec<u8>,
    /// The next event number not yet handed out.
    next: u64,
}

impl StreamReader {
    /// A reader of `turn`'s events in the stream at `path`, from
    /// `offset` on (the stream's length before the turn was submitted).
    pub fn new(path: &Path, turn: &str, offset: u64) -> Self {
        Self {
            path: path.to_path_buf(),
            turn: turn.to_string(),
            offset,
            partial: Vec::new(),
            next: 0,
        }
    }

    /// The length of the stream at `path` now (0 when there is none).
    pub fn end_of(path: &Path) -> u64 {
        std::fs::metadata(path).map_or(0, |meta| meta.len())
    }

    /// The turn's events written since the last call, each once.
    pub fn read_new(&mut self) -> Vec<Event> {
        let Ok(mut file) = File::open(&self.path) else {
            return Vec::new();
        };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut bytes).is_err()
        {
            return Vec::new();
        }
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let whole: Vec<u8> = self.partial.drain(..=end).collect();
        let mut events = Vec::new();
        for line in whole.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(line) = serde_json::from_slice::<Line<Event>>(line) else {
                continue;
            };
            if line.turn == self.turn && line.n >= self.next {
                if !within_a_step(&line.event) {
                    self.next = line.n + 1;
                }
                events.push(line.event);
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_runtime::session_store::SessionMeta;

    fn tool_call(id: &str) -> Event {
        Event::ToolCall {
            id: id.into(),
            name: "Bash".into(),
            arguments: serde_json::json!({}),
        }
    }

    fn delta(text: &str) -> Event {
        Event::TextDelta { text: text.into() }
    }

    #[test]
    fn a_turn_run_again_shows_each_event_once_and_other_turns_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        store
            .create(&SessionMeta::new("s1", "task", "model", "/ws"))
            .unwrap();
        let path = stream_path(&store, "s1");
        let mut reader = StreamReader::new(&path, "t1", StreamReader::end_of(&path));
        let other = EventStream::open(&store, "s1", "t0").unwrap();
        other.on_event(&tool_call("old"));
        // The first run streams a model call's text, then is lost.
        let first = EventStream::open(&store, "s1", "t1").unwrap();
        first.on_event(&delta("thinking"));
        first.on_event(&tool_call("a"));
        assert!(
            matches!(&reader.read_new()[..], [Event::TextDelta { .. }, Event::ToolCall { id, .. }] if id == "a")
        );
        // The run again gets the model call from the journal: no text.
        let again = EventStream::open(&store, "s1", "t1").unwrap();
        again.on_event(&tool_call("a"));
        again.on_event(&delta("more"));
        again.on_event(&tool_call("b"));
        let shown = reader.read_new();
        assert!(
            matches!(&shown[..], [Event::TextDelta { text }, Event::ToolCall { id, .. }] if text == "more" && id == "b"),
            "{shown:?}"
        );
        assert!(reader.read_new().is_empty());
    }
}
