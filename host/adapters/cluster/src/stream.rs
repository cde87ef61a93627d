//! A session's events as its turn runs, for whoever submitted the turn.
//!
//! The worker running a turn appends each of the loop's events to
//! `stream.jsonl` in the session's directory of the shared store, as one
//! line tagged with the turn and the event's number within the turn. A
//! turn run again after its worker was lost numbers its events from zero
//! again and repeats the ones already written (its steps come back from
//! the journal), so a reader shows each number once. What happens inside
//! a step is not repeated by a step the journal gives back, and is not
//! numbered (see `within_a_step`).
//!
//! Questions the turn waits on ([`crate::asks`]) are lines of the stream
//! too, under the id that answers them, followed by a line saying they
//! were answered.

use crate::question::Question;
use kaizen_protocol::{Event, Observer};
use kaizen_session_store::SessionStore;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file, in a session's directory, that holds the stream.
pub const STREAM_FILE: &str = "stream.jsonl";

/// One line of the stream.
#[derive(Serialize, Deserialize)]
struct Line<E, Q> {
    /// The turn, as its submitter named it.
    turn: String,
    /// The line's number within this run of the turn, from zero.
    n: u64,
    #[serde(flatten)]
    body: Body<E, Q>,
}

/// What a line says.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Body<E, Q> {
    /// One of the loop's events.
    Event(E),
    /// The turn waits for the answer to a question.
    Ask { id: String, question: Q },
    /// The question under this id was answered.
    Answered(String),
}

/// What a reader hands out.
#[derive(Debug, Clone)]
pub enum Item {
    /// One of the loop's events.
    Event(Event),
    /// The turn waits for the answer to `question`, which resolving `id`
    /// through the engine gives.
    Asked {
        /// The awakeable's id.
        id: String,
        /// The question.
        question: Question,
    },
    /// The question under this id was answered (here or elsewhere).
    Answered(String),
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

    /// Says the turn waits for the answer to `question` under `id`.
    pub fn asked(&self, id: &str, question: &Question) {
        self.write::<Event, _>(
            Body::Ask {
                id: id.to_string(),
                question,
            },
            true,
        );
    }

    /// Says the question under `id` was answered.
    pub fn answered(&self, id: &str) {
        self.write::<Event, Question>(Body::Answered(id.to_string()), true);
    }

    /// Appends a line; a `numbered` one takes the next number.
    fn write<E: Serialize, Q: Serialize>(&self, body: Body<E, Q>, numbered: bool) {
        let mut stream = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let line = Line {
            turn: self.turn.clone(),
            n: stream.next,
            body,
        };
        if numbered {
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

impl Observer for EventStream {
    fn on_event(&self, event: &Event) {
        self.write::<_, Question>(Body::Event(event), !within_a_step(event));
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

    /// The turn's lines written since the last call, each once.
    pub fn read_new(&mut self) -> Vec<Item> {
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
        let mut items = Vec::new();
        for line in lines(&whole) {
            if line.turn != self.turn || line.n < self.next {
                continue;
            }
            if !matches!(&line.body, Body::Event(event) if within_a_step(event)) {
                self.next = line.n + 1;
            }
            items.push(match line.body {
                Body::Event(event) => Item::Event(event),
                Body::Ask { id, question } => Item::Asked { id, question },
                Body::Answered(id) => Item::Answered(id),
            });
        }
        items
    }
}

/// The stream's whole lines that parse; a line that does not (a torn
/// write, a newer worker's) is passed over.
fn lines(bytes: &[u8]) -> impl Iterator<Item = Line<Event, Question>> + '_ {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
}

/// The questions session's stream at `path` waits on now: asked in a
/// turn that has not ended, and not answered, oldest first.
pub fn waiting(path: &Path) -> std::io::Result<Vec<(String, Question)>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err),
    };
    let mut asked: Vec<(String, String, Question)> = Vec::new();
    let mut answered = std::collections::HashSet::new();
    let mut ended = std::collections::HashSet::new();
    for line in lines(&bytes) {
        match line.body {
            Body::Event(Event::Result(_)) => {
                ended.insert(line.turn);
            }
            Body::Event(_) => {}
            Body::Ask { id, question } => {
                if !asked.iter().any(|(seen, _, _)| *seen == id) {
                    asked.push((id, line.turn, question));
                }
            }
            Body::Answered(id) => {
                answered.insert(id);
            }
        }
    }
    Ok(asked
        .into_iter()
        .filter(|(id, turn, _)| !answered.contains(id) && !ended.contains(turn))
        .map(|(id, _, question)| (id, question))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_session_store::SessionMeta;

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

    /// A store holding session `s1`, and the path of its stream.
    fn session() -> (tempfile::TempDir, SessionStore, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        store
            .create(&SessionMeta::new("s1", "task", "model", "/ws"))
            .unwrap();
        let path = stream_path(&store, "s1");
        (root, store, path)
    }

    #[test]
    fn a_turn_run_again_shows_each_event_once_and_other_turns_not_at_all() {
        let (_root, store, path) = session();
        let mut reader = StreamReader::new(&path, "t1", StreamReader::end_of(&path));
        let other = EventStream::open(&store, "s1", "t0").unwrap();
        other.on_event(&tool_call("old"));
        // The first run streams a model call's text, then is lost.
        let first = EventStream::open(&store, "s1", "t1").unwrap();
        first.on_event(&delta("thinking"));
        first.on_event(&tool_call("a"));
        assert!(
            matches!(&reader.read_new()[..], [Item::Event(Event::TextDelta { .. }), Item::Event(Event::ToolCall { id, .. })] if id == "a")
        );
        // The run again gets the model call from the journal: no text.
        let again = EventStream::open(&store, "s1", "t1").unwrap();
        again.on_event(&tool_call("a"));
        again.on_event(&delta("more"));
        again.on_event(&tool_call("b"));
        let shown = reader.read_new();
        assert!(
            matches!(&shown[..], [Item::Event(Event::TextDelta { text }), Item::Event(Event::ToolCall { id, .. })] if text == "more" && id == "b"),
            "{shown:?}"
        );
        assert!(reader.read_new().is_empty());
    }

    fn approval(tool: &str) -> Question {
        Question::Approval(kaizen_protocol::ApprovalRequest {
            tool: tool.into(),
            input: serde_json::json!({"command": "make"}),
            reason: "it asks".into(),
            always_rule: format!("{tool}(make)"),
            danger: None,
            agent: None,
            call_id: String::new(),
        })
    }

    #[test]
    fn a_question_waits_until_answered_once_even_when_the_turn_runs_again() {
        let (_root, store, path) = session();
        let mut reader = StreamReader::new(&path, "t1", 0);
        assert!(waiting(&path).unwrap().is_empty());
        let first = EventStream::open(&store, "s1", "t1").unwrap();
        first.on_event(&tool_call("a"));
        first.asked("sign_1", &approval("Bash"));
        assert_eq!(
            waiting(&path).unwrap(),
            [("sign_1".into(), approval("Bash"))]
        );
        assert!(matches!(
            &reader.read_new()[..],
            [Item::Event(_), Item::Asked { id, .. }] if id == "sign_1"
        ));
        // The worker is lost; the answer comes; the turn runs again and
        // asks again under the same id, answered at once.
        let again = EventStream::open(&store, "s1", "t1").unwrap();
        again.on_event(&tool_call("a"));
        again.asked("sign_1", &approval("Bash"));
        again.answered("sign_1");
        assert!(matches!(&reader.read_new()[..], [Item::Answered(id)] if id == "sign_1"));
        assert!(waiting(&path).unwrap().is_empty());
        // A question of a turn that ended waits no more.
        let next = EventStream::open(&store, "s1", "t2").unwrap();
        next.asked("sign_2", &approval("Edit"));
        assert_eq!(waiting(&path).unwrap().len(), 1);
        next.on_event(&Event::Result(kaizen_protocol::RunResult {
            output: String::new(),
            status: kaizen_protocol::Status::Complete,
            cycles_used: 0,
            tokens_used: Default::default(),
            cost_usd: 0.0,
            duration_ms: 0,
            session_id: "s1".into(),
            model_used: "model".into(),
            runtime_name: "kaizen".into(),
            tool_calls: Vec::new(),
            error_message: None,
            permission_denials: Vec::new(),
            compactions: 0,
            cost_estimated: false,
            runtime_selection: None,
        }));
        assert!(waiting(&path).unwrap().is_empty());
    }
}
