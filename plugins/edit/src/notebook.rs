//! NotebookEdit: replace, insert or delete one cell of a Jupyter notebook,
//! keeping it valid nbformat 4. The notebook is edited as a JSON tree, so
//! fields this code does not know (metadata, attachments, widget state)
//! are kept as they are; it is written back the way Jupyter writes it
//! (keys sorted, one-space indent, a final newline).

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::path::Path;

use kaizen_sdk::serde_json::{self, Map, Value};
use kaizen_sdk::session::FileRecord;
use kaizen_sdk::{Output, ToolError, json};

use crate::change::{Done, is_notebook};
use crate::files;

/// Most cell ids listed when a cell is not found.
const MAX_LISTED_IDS: usize = 20;

/// What to do with the cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Set the cell's source (and maybe its type).
    Replace,
    /// Add a new cell.
    Insert,
    /// Remove the cell.
    Delete,
}

impl Mode {
    /// The mode as `edit_mode` names it.
    fn as_str(self) -> &'static str {
        match self {
            Self::Replace => "replace",
            Self::Insert => "insert",
            Self::Delete => "delete",
        }
    }
}

/// The kinds of cell NotebookEdit writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A code cell, with outputs and an execution count.
    Code,
    /// A markdown cell.
    Markdown,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Markdown => "markdown",
        }
    }
}

/// One NotebookEdit call.
#[derive(Debug, Clone)]
pub(crate) struct CellEdit {
    /// The cell to change, or to insert after.
    pub cell_id: Option<String>,
    /// The cell's new source.
    pub new_source: String,
    /// The cell's (new) type.
    pub kind: Option<Kind>,
    /// What to do.
    pub mode: Mode,
}

/// NotebookEdit on the notebook at `path`, given the session's note.
pub(crate) fn edit_file(
    path: &Path,
    edit: &CellEdit,
    note: Option<&FileRecord>,
) -> Result<Done, ToolError> {
    if !is_notebook(path) {
        return Err(ToolError::invalid_input(format!(
            "{} is not a Jupyter notebook (.ipynb); NotebookEdit changes notebooks only. Use \
             Edit or Write for other files.",
            path.display()
        )));
    }
    let Some(current) = files::load(path, "NotebookEdit")? else {
        return Err(files::missing(
            path,
            "To create a notebook, Write its nbformat 4 JSON first.",
        ));
    };
    files::check_fresh(path, note, &current.record, "NotebookEdit")?;
    let mut notebook: Value = serde_json::from_slice(&current.bytes).map_err(|err| {
        ToolError::invalid_input(format!(
            "{} is not valid notebook JSON ({err}), so its cells cannot be edited. Read it to \
             see what it holds; fix it with Write.",
            path.display()
        ))
    })?;
    let shown = path.display().to_string();
    let summary =
        apply(&mut notebook, edit, &mut random_id).map_err(|why| why.into_error(&shown))?;
    let record = files::store(path, to_jupyter_json(&notebook).as_bytes(), "NotebookEdit")?;
    let output = Output::text(summary.text(&shown)).with_metadata(json!({
        "path": shown,
        "edit_mode": edit.mode.as_str(),
        "cell_id": summary.cell,
        "cell_type": summary.kind,
        "cells": summary.cells,
    }));
    Ok(Done {
        output,
        path: path.to_owned(),
        record,
    })
}

/// Why an edit could not be made, before the path is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not an nbformat 4 notebook; the text says what it is.
    NotNotebook(String),
    /// The input is incomplete for the mode; the text says what is missing.
    Input(String),
    /// No cell has this id; the notebook's ids (or labels) and count.
    NoCell {
        id: String,
        ids: Vec<String>,
        cells: usize,
    },
}

impl Refusal {
    fn into_error(self, path: &str) -> ToolError {
        match self {
            Self::NotNotebook(why) => ToolError::invalid_input(format!("{path} {why}")),
            Self::Input(what) => ToolError::invalid_input(what),
            Self::NoCell { id, ids, cells } => {
                let listed = if ids.is_empty() {
                    "It has no cells: insert one without cell_id to start it.".to_owned()
                } else {
                    let more = cells.saturating_sub(ids.len());
                    let more = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    format!("Its cells are {}{more}.", ids.join(", "))
                };
                ToolError::not_found(format!(
                    "No cell has the id \"{id}\" in {path}. {listed} Read the notebook to see \
                     its cells and their ids."
                ))
            }
        }
    }
}

/// What an applied edit did, for the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    mode: Mode,
    /// The cell's id, or `cell-N` for a cell without one (as Read shows it).
    cell: String,
    kind: String,
    /// Its 0-based position (before deletion, for a deleted cell).
    index: usize,
    /// Cells in the notebook afterwards.
    cells: usize,
    /// For inserts: the cell it follows, if any.
    after: Option<String>,
    /// For replaces: the cell's type changed, or its outputs were cleared.
    notes: Vec<&'static str>,
}

impl Summary {
    fn text(&self, path: &str) -> String {
        let Self {
            cell, kind, index, ..
        } = self;
        match self.mode {
            Mode::Replace => {
                let notes: String = self.notes.iter().map(|n| format!("; {n}")).collect();
                format!("Replaced the source of cell {cell} ({kind}) in {path}{notes}.")
            }
            Mode::Insert => {
                let place = match &self.after {
                    Some(after) => format!("after cell {after}"),
                    None => "at the start".to_owned(),
                };
                format!(
                    "Inserted a new {kind} cell (id {cell}) {place} of {path}; it is cell {} of {}.",
                    index + 1,
                    self.cells
                )
            }
            Mode::Delete => format!(
                "Deleted cell {cell} ({kind}) from {path}; {} {} left.",
                self.cells,
                if self.cells == 1 {
                    "cell is"
                } else {
                    "cells are"
                }
            ),
        }
    }
}

/// Applies `edit` to the notebook tree; `new_id` makes an id that is not
/// among the given ones, for a cell inserted into an nbformat 4.5+
/// notebook.
pub(crate) fn apply(
    notebook: &mut Value,
    edit: &CellEdit,
    new_id: &mut dyn FnMut(&HashSet<String>) -> String,
) -> Result<Summary, Refusal> {
    let with_ids = check_format(notebook)?;
    let cells = notebook["cells"].as_array_mut().ok_or_else(|| {
        Refusal::NotNotebook("has no `cells` list, so it is not a notebook.".into())
    })?;
    let as_list = source_as_list(cells);
    let target = match &edit.cell_id {
        Some(id) => Some(find_cell(cells, id)?),
        None => None,
    };
    match edit.mode {
        Mode::Replace => {
            let index = needed_cell(target, edit.mode, "change")?;
            let cell = cell_object(&mut cells[index])?;
            let mut notes = Vec::new();
            if let Some(kind) = edit.kind
                && cell.get("cell_type").and_then(Value::as_str) != Some(kind.as_str())
            {
                set_kind(cell, kind);
                notes.push(match kind {
                    Kind::Code => "it is now a code cell",
                    Kind::Markdown => "it is now a markdown cell",
                });
            }
            cell.insert("source".into(), source_value(&edit.new_source, as_list));
            if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
                // The old outputs came from the old source.
                let had_outputs = cell
                    .get("outputs")
                    .and_then(Value::as_array)
                    .is_some_and(|outputs| !outputs.is_empty());
                cell.insert("outputs".into(), json!([]));
                cell.insert("execution_count".into(), Value::Null);
                if had_outputs {
                    notes.push("its old outputs were cleared");
                }
            }
            Ok(summary(
                Mode::Replace,
                &cells[index],
                index,
                cells.len(),
                None,
                notes,
            ))
        }
        Mode::Insert => {
            let kind = edit.kind.ok_or_else(|| {
                Refusal::Input(
                    "edit_mode \"insert\" needs cell_type (\"code\" or \"markdown\") for the new \
                     cell."
                        .into(),
                )
            })?;
            let index = target.map_or(0, |i| i + 1);
            let after = target.map(|i| label(&cells[i], i));
            let mut cell = Map::new();
            cell.insert("metadata".into(), json!({}));
            cell.insert("source".into(), source_value(&edit.new_source, as_list));
            set_kind(&mut cell, kind);
            if with_ids {
                let taken: HashSet<String> = cells
                    .iter()
                    .filter_map(|c| c["id"].as_str().map(str::to_owned))
                    .collect();
                cell.insert("id".into(), Value::String(new_id(&taken)));
            }
            cells.insert(index, Value::Object(cell));
            Ok(summary(
                Mode::Insert,
                &cells[index],
                index,
                cells.len(),
                after,
                Vec::new(),
            ))
        }
        Mode::Delete => {
            let index = needed_cell(target, edit.mode, "delete")?;
            let removed = cells.remove(index);
            Ok(summary(
                Mode::Delete,
                &removed,
                index,
                cells.len(),
                None,
                Vec::new(),
            ))
        }
    }
}

/// The index of the cell `mode` acts on (to `verb` it), which needs a
/// `cell_id`.
fn needed_cell(target: Option<usize>, mode: Mode, verb: &str) -> Result<usize, Refusal> {
    target.ok_or_else(|| {
        Refusal::Input(format!(
            "edit_mode \"{}\" needs cell_id: the id of the cell to {verb}, as Read shows it.",
            mode.as_str()
        ))
    })
}

fn summary(
    mode: Mode,
    cell: &Value,
    index: usize,
    cells: usize,
    after: Option<String>,
    notes: Vec<&'static str>,
) -> Summary {
    Summary {
        mode,
        cell: label(cell, index),
        kind: cell["cell_type"].as_str().unwrap_or("code").to_owned(),
        index,
        cells,
        after,
        notes,
    }
}

/// Checks that `notebook` is nbformat 4; whether its cells carry ids
/// (nbformat 4.5 and later).
fn check_format(notebook: &Value) -> Result<bool, Refusal> {
    if !notebook.is_object() {
        return Err(Refusal::NotNotebook(
            "is JSON but not a notebook (its top level is not an object).".into(),
        ));
    }
    match notebook["nbformat"].as_u64() {
        Some(4) => Ok(notebook["nbformat_minor"].as_u64().unwrap_or(0) >= 5),
        Some(version) => Err(Refusal::NotNotebook(format!(
            "is an nbformat {version} notebook; NotebookEdit edits nbformat 4. Convert it first \
             (e.g. `jupyter nbconvert --to notebook --nbformat 4`)."
        ))),
        None => Err(Refusal::NotNotebook(
            "has no `nbformat` version, so it is not a notebook NotebookEdit can change.".into(),
        )),
    }
}

/// The index of the cell `id` names: a cell's `id`, or `cell-N` (what Read
/// shows for a cell without one) for the N-th cell, counting from 0.
fn find_cell(cells: &[Value], id: &str) -> Result<usize, Refusal> {
    if let Some(index) = cells.iter().position(|c| c["id"].as_str() == Some(id)) {
        return Ok(index);
    }
    let by_index = id
        .strip_prefix("cell-")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n < cells.len());
    by_index.ok_or_else(|| Refusal::NoCell {
        id: id.to_owned(),
        ids: cells
            .iter()
            .enumerate()
            .take(MAX_LISTED_IDS)
            .map(|(i, cell)| label(cell, i))
            .collect(),
        cells: cells.len(),
    })
}

/// How Read names a cell: its id, or `cell-N`.
fn label(cell: &Value, index: usize) -> String {
    cell["id"]
        .as_str()
        .map_or_else(|| format!("cell-{index}"), str::to_owned)
}

fn cell_object(cell: &mut Value) -> Result<&mut Map<String, Value>, Refusal> {
    cell.as_object_mut().ok_or_else(|| {
        Refusal::NotNotebook("has a cell that is not a JSON object, so it is not valid.".into())
    })
}

/// Makes `cell` a cell of `kind`: code cells have outputs and an execution
/// count; markdown cells may not have them.
fn set_kind(cell: &mut Map<String, Value>, kind: Kind) {
    cell.insert("cell_type".into(), Value::String(kind.as_str().into()));
    match kind {
        Kind::Code => {
            cell.entry("outputs").or_insert_with(|| json!([]));
            cell.entry("execution_count").or_insert(Value::Null);
        }
        Kind::Markdown => {
            cell.remove("outputs");
            cell.remove("execution_count");
        }
    }
}

/// Whether the notebook keeps sources as lists of lines (Jupyter's own
/// way, and the default) rather than single strings.
fn source_as_list(cells: &[Value]) -> bool {
    cells
        .iter()
        .find_map(|cell| cell.get("source"))
        .is_none_or(Value::is_array)
}

/// `text` as a cell source: a list of lines, each but the last ending in
/// `\n`, or one string.
fn source_value(text: &str, as_list: bool) -> Value {
    if as_list {
        Value::Array(
            text.split_inclusive('\n')
                .map(|line| Value::String(line.to_owned()))
                .collect(),
        )
    } else {
        Value::String(text.to_owned())
    }
}

/// The notebook as Jupyter writes it: keys sorted, one-space indent, a
/// final newline.
pub(crate) fn to_jupyter_json(notebook: &Value) -> String {
    use kaizen_sdk::serde::Serialize as _;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    // A `Value` always serializes.
    let _ = notebook.serialize(&mut serializer);
    let mut text = String::from_utf8(out).unwrap_or_default();
    text.push('\n');
    text
}

/// A fresh cell id like Jupyter's: eight hex digits from the host's
/// randomness, not among `taken`.
fn random_id(taken: &HashSet<String>) -> String {
    let random = RandomState::new();
    (0u64..)
        .map(|n| format!("{:08x}", random.hash_one(n) as u32))
        .find(|id| !taken.contains(id))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
