//! Write, Edit and MultiEdit on a resolved path, given the session's note
//! for it: plain Rust over `std::fs`, so it is tested natively. The tools
//! in `lib.rs` fetch the note before and record the result after.

use std::path::{Path, PathBuf};

use kaizen_sdk::session::FileRecord;
use kaizen_sdk::{Output, ToolError, json};

use crate::files::{self, Current};
use crate::replace::{self, EditError};
use crate::text::{TextFile, count_lines};

/// A change that was made: what the model sees, and what to note.
pub(crate) struct Done {
    /// The result for the model.
    pub output: Output,
    /// The file changed.
    pub path: PathBuf,
    /// Its fingerprint after the change.
    pub record: FileRecord,
}

/// One replacement of Edit or MultiEdit.
#[derive(Debug, Clone)]
pub(crate) struct EditOp {
    /// The exact text to replace (empty: fill a new or empty file).
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence rather than insist on exactly one.
    pub replace_all: bool,
}

/// Whether `path` names a Jupyter notebook.
pub(crate) fn is_notebook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// Write: replaces (or creates) the file at `path` with `content`.
pub(crate) fn write(
    path: &Path,
    content: &str,
    note: Option<&FileRecord>,
) -> Result<Done, ToolError> {
    let before = files::fingerprint(path, "Write")?;
    if let Some(current) = &before {
        files::check_fresh(path, note, current, "Write")?;
    }
    let record = files::store(path, content.as_bytes(), "Write")?;
    let lines = count_lines(content);
    let shown = path.display();
    let text = match &before {
        None => format!("Created {shown} ({}).", lines_text(lines)),
        Some(_) => format!(
            "The file {shown} has been overwritten with the new content ({}).",
            lines_text(lines)
        ),
    };
    let output = Output::text(text).with_metadata(json!({
        "path": shown.to_string(),
        "type": if before.is_some() { "update" } else { "create" },
        "lines": lines,
        "bytes": content.len(),
    }));
    Ok(Done {
        output,
        path: path.to_owned(),
        record,
    })
}

/// Edit (one op) or MultiEdit (several, in order, all or nothing) on
/// `path`. `tool` names the tool in messages.
pub(crate) fn edit(
    path: &Path,
    ops: &[EditOp],
    note: Option<&FileRecord>,
    tool: &str,
) -> Result<Done, ToolError> {
    if is_notebook(path) {
        return Err(ToolError::invalid_input(format!(
            "{} is a Jupyter notebook; {tool} does not change notebooks, whose JSON must stay \
             valid. Use NotebookEdit with the id of the cell to change (Read shows each cell's \
             id).",
            path.display()
        )));
    }
    let Some(first) = ops.first() else {
        return Err(ToolError::invalid_input(
            "`edits` is empty: give at least one {old_string, new_string} pair.",
        ));
    };
    // A call that could never change anything is refused before the file
    // is even looked at.
    if let Some(i) = ops.iter().position(|op| op.old_string == op.new_string) {
        return Err(edit_error(&EditError::Identical, path, i, ops.len()));
    }
    let current = files::load(path, tool)?;
    let created = current.is_none();
    let mut file = match current {
        None if first.old_string.is_empty() => TextFile::from_text(String::new(), false),
        None => {
            return Err(files::missing(
                path,
                &format!(
                    "To create a new file, call {tool} with an empty old_string, or use Write."
                ),
            ));
        }
        Some(current) => open_existing(path, current, note, tool)?,
    };
    let mut counts = Vec::with_capacity(ops.len());
    let mut changed = 0..0;
    for (i, op) in ops.iter().enumerate() {
        let result = if i == 0
            && op.old_string.is_empty()
            && !op.new_string.is_empty()
            && file.text.is_empty()
        {
            // An empty old_string fills a new (or empty) file, whose line
            // endings are then those of new_string.
            file = TextFile::from_text(op.new_string.clone(), file.bom);
            Ok(replace::Applied {
                count: 1,
                first: 0..file.text.len(),
            })
        } else {
            let old = file.adapt(&op.old_string);
            let new = file.adapt(&op.new_string);
            replace::apply(&mut file.text, &old, &new, op.replace_all)
        };
        match result {
            Ok(applied) => {
                counts.push(applied.count);
                changed = applied.first;
            }
            Err(err) => return Err(edit_error(&err, path, i, ops.len())),
        }
    }
    let record = files::store(path, &file.encode(), tool)?;
    let output = describe(path, &file.text, ops, &counts, &changed, created, tool);
    Ok(Done {
        output,
        path: path.to_owned(),
        record,
    })
}

/// An existing file, checked against the session's note and decoded.
fn open_existing(
    path: &Path,
    current: Current,
    note: Option<&FileRecord>,
    tool: &str,
) -> Result<TextFile, ToolError> {
    files::check_fresh(path, note, &current.record, tool)?;
    TextFile::decode(current.bytes).map_err(|why| {
        ToolError::invalid_input(format!(
            "{} is not a text file {tool} can change: {why}. {tool} works on UTF-8 text; to \
             replace the whole file, use Write.",
            path.display()
        ))
    })
}

/// The error for op `index` of `total`; with several ops, which one failed
/// and that nothing was written.
fn edit_error(err: &EditError, path: &Path, index: usize, total: usize) -> ToolError {
    let message = err.message(&path.display().to_string());
    let message = if total > 1 {
        format!(
            "Edit {} of {total} failed: {message} None of the edits were applied; the file is \
             unchanged. Fix that edit and send all of them again.",
            index + 1
        )
    } else {
        message
    };
    match err {
        EditError::NotFound { .. } => ToolError::not_found(message),
        _ => ToolError::invalid_input(message),
    }
}

/// The result text: a `cat -n` snippet of the change for one edit, a list
/// of the edits for several.
fn describe(
    path: &Path,
    text: &str,
    ops: &[EditOp],
    counts: &[usize],
    changed: &std::ops::Range<usize>,
    created: bool,
    tool: &str,
) -> Output {
    let shown = path.display();
    let replacements: usize = counts.iter().sum();
    let lines = count_lines(text);
    let body = if created && ops.len() == 1 {
        format!("Created {shown} ({}).", lines_text(lines))
    } else if ops.len() == 1 {
        let what = match counts[0] {
            1 => String::new(),
            n => format!(" All {n} occurrences of old_string were replaced."),
        };
        format!(
            "The file {shown} has been updated.{what} Here is the result of running `cat -n` on \
             a snippet of the edited file:\n{}",
            replace::snippet(text, changed)
        )
    } else {
        let verb = if created { "Created" } else { "Updated" };
        let mut body = format!("{verb} {shown} with {} edits:", ops.len());
        for (i, (op, count)) in ops.iter().zip(counts).enumerate() {
            let times = if *count == 1 {
                String::new()
            } else {
                format!(" ({count} occurrences)")
            };
            body.push_str(&format!(
                "\n{}. Replaced {} with {}{times}",
                i + 1,
                quote(&op.old_string),
                quote(&op.new_string)
            ));
        }
        body
    };
    Output::text(body).with_metadata(json!({
        "path": shown.to_string(),
        "tool": tool,
        "type": if created { "create" } else { "update" },
        "edits": ops.len(),
        "replacements": replacements,
        "lines": lines,
    }))
}

/// `s` quoted for a one-line summary, cut after 60 characters.
fn quote(s: &str) -> String {
    let escaped: String = s.escape_debug().collect();
    match escaped.char_indices().nth(60) {
        Some((cut, _)) => format!("\"{}…\"", &escaped[..cut]),
        None => format!("\"{escaped}\""),
    }
}

/// "1 line", "12 lines".
fn lines_text(n: usize) -> String {
    format!("{n} {}", if n == 1 { "line" } else { "lines" })
}

#[cfg(test)]
mod tests;
