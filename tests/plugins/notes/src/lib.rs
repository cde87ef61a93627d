//! `notes`: reads and replaces the session's notes through the `session`
//! host interface, for the host's tests of that interface.

use std::path::Path;

use kaizen_sdk::prelude::*;
use kaizen_sdk::serde_json::Value;
use kaizen_sdk::session::{self, FileRecord};

/// Input of `Notes`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct NotesInput {
    /// The file whose note to report (and replace when `hash` is given).
    path: String,
    /// The hash to note for `path` next.
    hash: Option<String>,
    /// The todo list to set next.
    todos: Option<Vec<Value>>,
    /// A file to announce a change of (`will-change`) first; the report's
    /// `kept` is the host's answer.
    keep: Option<String>,
}

/// Reports the notes, then changes them.
struct Notes;

impl Tool for Notes {
    const NAME: &'static str = "Notes";
    const DESCRIPTION: &'static str = "Returns {\"seen\": the note for `path` or null, \
        \"todos\": the todo list}, then notes `hash` for `path` and sets `todos` when given. With `keep`, first announces a \
        change of that file, and reports the host's answer as `kept`.";
    type Input = NotesInput;

    fn call(_ctx: &CallContext, input: NotesInput) -> Result<Output, ToolError> {
        let kept = input
            .keep
            .map(|keep| match session::will_change(Path::new(&keep)) {
                Ok(()) => json!("kept"),
                Err(why) => json!({ "error": why }),
            });
        let path = Path::new(&input.path);
        let seen = session::file_note(path).map(|note| json!([note.hash, note.mtime_ms]));
        let mut report = json!({"seen": seen, "todos": session::todos()});
        if let Some(kept) = kept {
            report["kept"] = kept;
        }
        if let Some(hash) = input.hash {
            session::note_file(path, &FileRecord { hash, mtime_ms: 42 });
        }
        if let Some(todos) = input.todos {
            session::set_todos(&todos);
        }
        Ok(report.to_string().into())
    }
}

export_tools!(Notes);
