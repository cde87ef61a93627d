//! What a session's tools note for each other: the files they read or
//! wrote (so `Write` and `Edit` can insist on a fresh read) and the todo
//! list. The loop owns the durable copy in its session state; a call sees
//! the notes through its [`CallContext`](crate::CallContext).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

/// What a tool saw of a file when it read or wrote it, so a later write
/// can tell whether the file changed since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Hash of the content (BLAKE3 in hex, as the SDKs compute it).
    pub hash: String,
    /// Modification time, in milliseconds since the Unix epoch.
    pub mtime_ms: u64,
}

/// The notes themselves, as plain data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Notes {
    /// Files read or written, by absolute path.
    pub files: BTreeMap<String, FileRecord>,
    /// The todo list, one JSON object per item.
    pub todos: Vec<serde_json::Value>,
    /// The skill or command whose `allowed-tools` narrow the calls the
    /// loop admits, until the next task.
    #[serde(default)]
    pub active_skill: Option<ActiveSkill>,
}

/// A skill (or command) that narrows what may be called: only calls that
/// one of its `allowed` rules matches (`Read`, `Bash(git diff:*)`) run,
/// besides loading another skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveSkill {
    /// Its name, for the refusal's message.
    pub name: String,
    /// Its `allowed-tools`, as permission rules.
    pub allowed: Vec<String>,
}

/// The notes of one session, shared by its concurrent calls.
///
/// Calls that run together (several reads at once) note files at the same
/// time, hence the lock; it is held only to copy a record in or out.
#[derive(Debug, Default)]
pub struct SessionNotes {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    notes: Notes,
    /// Whether `set_todos` was called since the notes were made, so the
    /// loop can report a new list without comparing lists.
    todos_set: bool,
    /// Paths noted since the notes were made, for [`NoteChanges`].
    noted: BTreeSet<String>,
}

impl SessionNotes {
    /// Notes holding `notes` (e.g. restored from a session's state).
    pub fn new(notes: Notes) -> Self {
        Self {
            inner: Mutex::new(Inner {
                notes,
                todos_set: false,
                noted: BTreeSet::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The data stays consistent even if a holder panicked: every
        // update is a single insert or assignment.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records what a tool saw of the file at `path` (absolute).
    pub fn note_file(&self, path: impl Into<String>, record: FileRecord) {
        let path = path.into();
        let mut inner = self.lock();
        inner.noted.insert(path.clone());
        inner.notes.files.insert(path, record);
    }

    /// The last record for the file at `path`, if any.
    pub fn file_note(&self, path: &str) -> Option<FileRecord> {
        self.lock().notes.files.get(path).cloned()
    }

    /// A copy of the todo list.
    pub fn todos(&self) -> Vec<serde_json::Value> {
        self.lock().notes.todos.clone()
    }

    /// Replaces the todo list.
    pub fn set_todos(&self, todos: Vec<serde_json::Value>) {
        let mut inner = self.lock();
        inner.notes.todos = todos;
        inner.todos_set = true;
    }

    /// Whether the todo list was replaced since these notes were made.
    pub fn todos_set(&self) -> bool {
        self.lock().todos_set
    }

    /// The skill that narrows what may be called, if any.
    pub fn active_skill(&self) -> Option<ActiveSkill> {
        self.lock().notes.active_skill.clone()
    }

    /// Makes `skill` the one that narrows what may be called (`None`:
    /// nothing narrows).
    pub fn set_active_skill(&self, skill: Option<ActiveSkill>) {
        self.lock().notes.active_skill = skill;
    }

    /// A copy of all the notes.
    pub fn snapshot(&self) -> Notes {
        self.lock().notes.clone()
    }

    /// What changed since the notes were made: the files noted (with
    /// their latest records) and the new todo list, if one was set. A
    /// session's log keeps these instead of the whole notes every step.
    pub fn changes(&self) -> NoteChanges {
        let inner = self.lock();
        NoteChanges {
            files: inner
                .noted
                .iter()
                .filter_map(|path| Some((path.clone(), inner.notes.files.get(path)?.clone())))
                .collect(),
            todos: inner.todos_set.then(|| inner.notes.todos.clone()),
        }
    }

    /// Takes the notes out, leaving these empty: how the loop moves them
    /// back into its session state without copying.
    pub fn take(&self) -> Notes {
        std::mem::take(&mut self.lock().notes)
    }
}

/// What a step changed in the notes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoteChanges {
    /// Files noted, with their latest records.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, FileRecord>,
    /// The new todo list, when one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todos: Option<Vec<serde_json::Value>>,
}

impl NoteChanges {
    /// Applies the changes to `notes`.
    pub fn apply_to(&self, notes: &mut Notes) {
        notes
            .files
            .extend(self.files.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(todos) = &self.todos {
            notes.todos.clone_from(todos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(hash: &str) -> FileRecord {
        FileRecord {
            hash: hash.into(),
            mtime_ms: 7,
        }
    }

    #[test]
    fn files_are_noted_replaced_and_taken_out() {
        let notes = SessionNotes::default();
        assert_eq!(notes.file_note("/a"), None);
        notes.note_file("/a", record("1"));
        notes.note_file("/a", record("2"));
        assert_eq!(notes.file_note("/a"), Some(record("2")));
        let taken = notes.take();
        assert_eq!(taken.files.len(), 1);
        assert_eq!(notes.file_note("/a"), None);
    }

    #[test]
    fn changes_name_what_was_noted_and_apply_to_old_notes() {
        let old = Notes {
            files: BTreeMap::from([("/a".to_string(), record("1")), ("/b".into(), record("1"))]),
            ..Notes::default()
        };
        let notes = SessionNotes::new(old.clone());
        assert_eq!(notes.changes(), NoteChanges::default());
        notes.note_file("/b", record("2"));
        notes.note_file("/c", record("3"));
        notes.set_todos(vec![serde_json::json!("t")]);
        let changes = notes.changes();
        assert_eq!(changes.files.keys().collect::<Vec<_>>(), ["/b", "/c"]);
        let mut replayed = old;
        changes.apply_to(&mut replayed);
        assert_eq!(replayed, notes.take());
    }

    #[test]
    fn setting_todos_is_remembered() {
        let notes = SessionNotes::new(Notes {
            todos: vec![serde_json::json!({"content": "old"})],
            ..Notes::default()
        });
        assert!(!notes.todos_set());
        notes.set_todos(vec![serde_json::json!({"content": "new"})]);
        assert!(notes.todos_set());
        assert_eq!(notes.todos()[0]["content"], "new");
        assert_eq!(notes.snapshot().todos.len(), 1);
    }
}
