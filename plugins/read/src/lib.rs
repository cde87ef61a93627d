//! `read`: the built-in `Read` tool, which reads a file the way Claude
//! Code's tool of the same name does.
//!
//! - Text comes back in `cat -n` style: each line prefixed by its number,
//!   right-aligned to width 6, and a tab. At most 2000 lines from `offset`
//!   (1-based, default 1) unless `limit` says otherwise; lines longer than
//!   2000 characters are cut; a note says when the file goes on. A file
//!   over 256 KB read without `offset` or `limit` is refused with advice to
//!   page through it. Files are streamed, so paging through a large file
//!   never holds more than the window in memory.
//! - Images (`.png`, `.jpg`/`.jpeg`, `.gif`, `.webp`) come back as image
//!   content, for models that take images.
//! - PDFs come back as the text of their pages, a range at a time
//!   (`pages`), with the page count in the metadata.
//! - Jupyter notebooks (`.ipynb`) come back as their cells, with the text
//!   of code cells' outputs and their PNG, JPEG, GIF and WebP outputs as
//!   images after the text.
//! - Directories, binary files and missing files are refused with errors
//!   that say what to do instead (missing files with close names in the
//!   same directory).
//!
//! Every file read successfully is noted in the session (its content hash
//! and modification time), which is what Write and Edit check before they
//! change it.
//!
//! The logic is plain Rust over `std::fs` and is tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml`.

mod image;
mod notebook;
mod path;
mod pdf;
mod text;

use std::path::Path;

use kaizen_sdk::prelude::*;
use kaizen_sdk::session;

/// How many lines are shown when `limit` is not given.
const DEFAULT_LIMIT: usize = 2000;

/// Files larger than this are refused unless `offset` or `limit` is given.
const MAX_UNPAGED_BYTES: u64 = 256 * 1024;

/// The most text one call returns: a window stops early (with a note
/// saying where to go on) rather than grow past it. About 25,000 tokens,
/// Claude Code's bound for Read; the loop's own cut lies well above it.
const MAX_OUTPUT_BYTES: usize = 100 * 1024;

/// Input of `Read`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct ReadInput {
    /// The absolute path of the file to read (a relative path is resolved against the current working directory).
    file_path: String,
    /// The line number to start reading from (1 is the first line). Only give it when the file is too large to read at once.
    offset: Option<usize>,
    /// The number of lines to read. Only give it when the file is too large to read at once.
    limit: Option<usize>,
    /// For a PDF: the pages to read, 1-based, one or a range ("3", "1-5"; at most 20). Required for PDFs of more than 10 pages.
    pages: Option<String>,
}

/// The `Read` tool.
struct Read;

impl Tool for Read {
    const NAME: &'static str = "Read";
    const DESCRIPTION: &'static str = "\
Reads a file from the local filesystem. You can read any file in the workspace and the \
directories added to it directly with this tool. Assume the path you were given is valid; \
it is fine to try reading a file that may not exist: you will get an error that says so.
- `file_path` must be an absolute path, not a relative one.
- By default it reads up to 2000 lines from the start of the file. You can give a line \
`offset` (1-based) and a `limit` (number of lines), which helps with long files, but it is \
best to read the whole file by omitting both.
- Lines longer than 2000 characters are cut.
- Results come back in `cat -n` format: each line starts with its number (from 1), \
right-aligned, and a tab. The number and the tab are not part of the file: leave them out \
when quoting or editing its text.
- Files over 256 KB must be read in parts with `offset` and `limit`.
- Images (PNG, JPEG, GIF, WebP) are returned as images that you can see.
- PDF files (.pdf) are returned as the text of their pages. For a PDF of more than 10 pages, \
give `pages` with a range of at most 20 pages (e.g. pages: \"1-5\"); scanned pages without \
text and password-protected PDFs are refused.
- Jupyter notebooks (.ipynb) are returned as their cells with their outputs (image outputs as \
images). A notebook read \
with `offset` or `limit` is shown as raw JSON lines instead.
- It reads files only, not directories: to list a directory, use Glob (e.g. pattern \"*\" \
with the directory as `path`).
- Binary files other than images are refused.
- You can call several tools in one response: when several files may be useful, read them \
all at once.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = ReadInput;

    fn call(ctx: &CallContext, input: ReadInput) -> Result<Output, ToolError> {
        let cwd = if ctx.cwd.is_empty() {
            &ctx.workspace
        } else {
            &ctx.cwd
        };
        let cwd = Path::new(cwd);
        let output = read(cwd, &input)?;
        note_read(cwd, &input.file_path);
        Ok(output)
    }
}

/// Notes in the session what the file at `file_path` held when it was
/// read, so that Write and Edit can tell whether it changed since. A file
/// that cannot be fingerprinted (gone already) is simply not noted: the
/// write tools then ask for a fresh read.
fn note_read(cwd: &Path, file_path: &str) {
    let Ok(path) = path::resolve(cwd, file_path) else {
        return;
    };
    if let Ok(record) = session::fingerprint(&path) {
        session::note_file(&path, &record);
    }
}

export_tools!(Read);

/// The whole tool, for a call whose current directory is `cwd`.
fn read(cwd: &Path, input: &ReadInput) -> Result<Output, ToolError> {
    if input.limit == Some(0) {
        return Err(ToolError::invalid_input(
            "`limit` must be at least 1 (the number of lines to read). Omit it to read up to \
             2000 lines.",
        ));
    }
    let path = path::resolve(cwd, &input.file_path)?;
    path::check_granted(&path)?;
    let meta = path::stat(cwd, &input.file_path, &path)?;
    if meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "{} is a directory, not a file; Read reads files only. Use Glob to list the files \
             in it (e.g. pattern \"*\" or \"**/*\" with path \"{}\"), then Read one of them.",
            path.display(),
            path.display()
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::invalid_input(format!(
            "{} is not a regular file (it is a device, a pipe or a socket), so it cannot be \
             read. Read a regular file instead.",
            path.display()
        )));
    }
    let paged = input.offset.is_some() || input.limit.is_some();
    if let Some(media_type) = image::media_type(&path) {
        return image::read(&path, meta.len(), media_type);
    }
    if pdf::is_pdf(&path) {
        if paged {
            return Err(ToolError::invalid_input(
                "A PDF is read by pages, not lines: give `pages` (e.g. \"1-5\") instead of \
                 `offset` and `limit`.",
            ));
        }
        return pdf::read(&path, meta.len(), input.pages.as_deref());
    }
    if input.pages.is_some() {
        return Err(ToolError::invalid_input(format!(
            "`pages` is for PDFs, and {} is not one; read it without `pages` (with `offset` \
             and `limit` to page through a long text file).",
            path.display()
        )));
    }
    if notebook::is_notebook(&path) && !paged {
        return notebook::read(&path, meta.len());
    }
    text::read(&path, meta.len(), input.offset, input.limit)
}

/// A byte count for people: `512 bytes`, `300.0 KB`, `12.5 MB`, `3.1 GB`
/// (powers of 1024).
fn human_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let size = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if size < KB * KB {
        format!("{:.1} KB", size / KB)
    } else if size < KB * KB * KB {
        format!("{:.1} MB", size / (KB * KB))
    } else {
        format!("{:.1} GB", size / (KB * KB * KB))
    }
}

/// `n` followed by `one` or `many`: `1 line`, `3 lines`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Maps an error met while reading `path` (after it was found) to what
/// the model should know.
fn read_error(path: &Path, err: std::io::Error) -> ToolError {
    if err.kind() == std::io::ErrorKind::PermissionDenied {
        return ToolError::permission_denied(format!(
            "{} cannot be read: permission denied. Read another file, or ask the user to make \
             this one readable.",
            path.display()
        ));
    }
    ToolError::from(err).context(format!("cannot read {}", path.display()))
}

#[cfg(test)]
mod tests;
