//! `edit`: the built-in tools that change files, shaped like Claude Code's.
//!
//! - `Write` replaces a file's whole content or creates it (and its parent
//!   directories).
//! - `Edit` replaces one exact string (every occurrence with
//!   `replace_all`); an empty `old_string` creates a file.
//! - `MultiEdit` applies several such replacements in order, all or none.
//! - `NotebookEdit` replaces, inserts or deletes a notebook cell.
//!
//! An existing file is changed only if the session read it (with `Read`,
//! or wrote it with one of these tools) and it still holds what was seen:
//! the session's notes keep each file's content hash and modification
//! time. After a change the new content is noted, so further edits need no
//! new read.
//!
//! The logic is plain Rust over `std::fs` and is tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml -p kaizen-builtin-edit`.
//! Only the tools below talk to the host (for the notes).

mod change;
mod files;
mod notebook;
mod replace;
mod text;

use std::path::{Path, PathBuf};

use kaizen_sdk::prelude::*;
use kaizen_sdk::session;

use change::{Done, EditOp};

/// Input of `Write`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct WriteInput {
    /// The absolute path of the file to write (not a relative path).
    file_path: String,
    /// The whole content to write to the file.
    content: String,
}

/// Input of `Edit`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct EditInput {
    /// The absolute path of the file to change.
    file_path: String,
    /// The exact text to replace. Empty to create a new file.
    old_string: String,
    /// The text to put in its place (must differ from old_string).
    new_string: String,
    /// Replace every occurrence of old_string (default false: it must occur exactly once).
    #[serde(default)]
    replace_all: bool,
}

/// One replacement of `MultiEdit`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct EditEntry {
    /// The exact text to replace.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence of old_string (default false).
    #[serde(default)]
    replace_all: bool,
}

/// Input of `MultiEdit`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct MultiEditInput {
    /// The absolute path of the file to change.
    file_path: String,
    /// The replacements, applied in order, each to the result of the one before.
    #[schemars(length(min = 1))]
    edits: Vec<EditEntry>,
}

/// Cell types NotebookEdit writes.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "lowercase")]
enum CellType {
    Code,
    Markdown,
}

/// What NotebookEdit does with the cell.
#[derive(Deserialize, JsonSchema, Default)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "lowercase")]
enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

/// Input of `NotebookEdit`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct NotebookEditInput {
    /// The absolute path of the Jupyter notebook (.ipynb) to change.
    notebook_path: String,
    /// The id of the cell to replace or delete (as Read shows it). For insert, the new cell goes after this cell, or first when it is omitted.
    cell_id: Option<String>,
    /// The new source of the cell (ignored by delete).
    new_source: String,
    /// The cell's type: required for insert; for replace, changes the cell's type.
    cell_type: Option<CellType>,
    /// replace (default), insert or delete.
    #[serde(default)]
    edit_mode: EditMode,
}

/// The directory relative paths resolve against.
fn cwd(ctx: &CallContext) -> &Path {
    Path::new(if ctx.cwd.is_empty() {
        &ctx.workspace
    } else {
        &ctx.cwd
    })
}

/// Runs `change` on the file `given` names, with the session's note for
/// it, and notes what it wrote.
fn with_notes(
    ctx: &CallContext,
    given: &str,
    field: &str,
    tool: &str,
    change: impl FnOnce(&Path, Option<&session::FileRecord>) -> Result<Done, ToolError>,
) -> Result<Output, ToolError> {
    let path: PathBuf = files::resolve(cwd(ctx), given, field)?;
    files::check_granted(&path, tool)?;
    let note = session::file_note(&path);
    let done = change(&path, note.as_ref())?;
    session::note_file(&done.path, &done.record);
    Ok(done.output)
}

/// The `Write` tool.
struct Write;

impl Tool for Write {
    const NAME: &'static str = "Write";
    const DESCRIPTION: &'static str = "\
Writes a file to the local filesystem, replacing it if it exists.
- `file_path` must be an absolute path. Missing parent directories are created.
- An existing file must have been read with the Read tool in this session first, and not \
changed since; otherwise the call fails. Read it, then write.
- Prefer Edit for changing part of an existing file: it sends only the changed text.
- Do not create documentation files (*.md, README) unless the user asked for them.";
    type Input = WriteInput;

    fn call(ctx: &CallContext, input: WriteInput) -> Result<Output, ToolError> {
        with_notes(ctx, &input.file_path, "file_path", "Write", |path, note| {
            change::write(path, &input.content, note)
        })
    }
}

/// The `Edit` tool.
struct Edit;

impl Tool for Edit {
    const NAME: &'static str = "Edit";
    const DESCRIPTION: &'static str = "\
Replaces exact text in a file.
- Read the file with the Read tool in this session first; the edit fails if the file was not \
read or changed since.
- `old_string` must match the file exactly, indentation included. Copy it from Read's output \
without the line-number prefix (everything up to and including the tab after the number).
- The edit fails if `old_string` occurs more than once: include more surrounding lines to make \
it unique, or set `replace_all` to change every occurrence (e.g. to rename a variable).
- An empty `old_string` creates a new file with `new_string` as its content.
- Files with Windows (CRLF) line endings can be matched with plain newlines; they keep their \
endings.
- For Jupyter notebooks use NotebookEdit; for several changes to one file, MultiEdit.";
    type Input = EditInput;

    fn call(ctx: &CallContext, input: EditInput) -> Result<Output, ToolError> {
        let op = EditOp {
            old_string: input.old_string,
            new_string: input.new_string,
            replace_all: input.replace_all,
        };
        with_notes(ctx, &input.file_path, "file_path", "Edit", |path, note| {
            change::edit(path, &[op], note, "Edit")
        })
    }
}

/// The `MultiEdit` tool.
struct MultiEdit;

impl Tool for MultiEdit {
    const NAME: &'static str = "MultiEdit";
    const DESCRIPTION: &'static str = "\
Makes several replacements in one file at once; prefer it to several Edit calls on the same \
file.
- Each edit works like Edit (`old_string`, `new_string`, `replace_all`) and applies to the \
result of the edits before it, in order.
- All or nothing: if any edit fails, none is applied and the file is unchanged; the error says \
which edit failed.
- Read the file first in this session. To create a file, give an empty `old_string` in the \
first edit.";
    type Input = MultiEditInput;

    fn call(ctx: &CallContext, input: MultiEditInput) -> Result<Output, ToolError> {
        let ops: Vec<EditOp> = input
            .edits
            .into_iter()
            .map(|entry| EditOp {
                old_string: entry.old_string,
                new_string: entry.new_string,
                replace_all: entry.replace_all,
            })
            .collect();
        with_notes(
            ctx,
            &input.file_path,
            "file_path",
            "MultiEdit",
            |path, note| change::edit(path, &ops, note, "MultiEdit"),
        )
    }
}

/// The `NotebookEdit` tool.
struct NotebookEdit;

impl Tool for NotebookEdit {
    const NAME: &'static str = "NotebookEdit";
    const DESCRIPTION: &'static str = "\
Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell, or \
deletes it.
- `notebook_path` must be absolute; read the notebook with Read in this session first.
- `cell_id` is the id Read shows for the cell (`cell-N` for cells without one, counting from 0).
- `edit_mode`: `replace` (default) sets the cell's source (and type, with `cell_type`), clearing \
a code cell's outputs; `insert` adds a cell of `cell_type` after `cell_id`, or first without \
it; `delete` removes the cell.
- The notebook stays valid nbformat 4: metadata and other fields are kept.";
    type Input = NotebookEditInput;

    fn call(ctx: &CallContext, input: NotebookEditInput) -> Result<Output, ToolError> {
        let edit = notebook::CellEdit {
            cell_id: input.cell_id,
            new_source: input.new_source,
            kind: input.cell_type.map(|kind| match kind {
                CellType::Code => notebook::Kind::Code,
                CellType::Markdown => notebook::Kind::Markdown,
            }),
            mode: match input.edit_mode {
                EditMode::Replace => notebook::Mode::Replace,
                EditMode::Insert => notebook::Mode::Insert,
                EditMode::Delete => notebook::Mode::Delete,
            },
        };
        with_notes(
            ctx,
            &input.notebook_path,
            "notebook_path",
            "NotebookEdit",
            |path, note| notebook::edit_file(path, &edit, note),
        )
    }
}

export_tools!(Write, Edit, MultiEdit, NotebookEdit);
