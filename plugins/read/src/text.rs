//! Text files: a window of lines in `cat -n` style, streamed from the
//! file so that only the window is held in memory.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read as _};
use std::path::Path;

use kaizen_sdk::prelude::*;

use crate::{DEFAULT_LIMIT, MAX_OUTPUT_BYTES, MAX_UNPAGED_BYTES, human_size, plural, read_error};

/// Lines longer than this many characters are cut.
pub(crate) const MAX_LINE_CHARS: usize = 2000;

/// Bytes kept of each line: enough for [`MAX_LINE_CHARS`] characters of
/// up to four bytes each, and a little more to tell that a line is longer.
const KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// How much of the start of a file decides whether it is text.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;

/// More invalid UTF-8 sequences than this in the sniffed start of a file
/// make it binary; fewer are shown as U+FFFD.
pub(crate) const MAX_INVALID_SEQUENCES: usize = 8;

/// Lines are counted (for notes and errors) only in files up to this
/// size; a larger file is not read past the window just to count.
const MAX_COUNTED_BYTES: u64 = 64 * 1024 * 1024;

/// Why the start of a file says it is not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binary {
    /// A NUL byte at this offset.
    Nul(usize),
    /// This many invalid UTF-8 sequences.
    InvalidUtf8(usize),
}

/// Whether `sample` (the start of a file) looks binary: it holds a NUL
/// byte, or more than [`MAX_INVALID_SEQUENCES`] invalid UTF-8 sequences.
/// A multi-byte character cut by the end of the sample is not invalid.
pub(crate) fn sniff(sample: &[u8]) -> Option<Binary> {
    if let Some(at) = sample.iter().position(|&b| b == 0) {
        return Some(Binary::Nul(at));
    }
    let mut invalid = 0;
    let mut rest = sample;
    while let Err(err) = std::str::from_utf8(rest) {
        let Some(len) = err.error_len() else { break };
        invalid += 1;
        rest = &rest[err.valid_up_to() + len..];
    }
    (invalid > MAX_INVALID_SEQUENCES).then_some(Binary::InvalidUtf8(invalid))
}

/// One line as read: its first [`KEEP_BYTES`] bytes, without the line
/// ending, and its whole length in characters.
#[derive(Debug, Default)]
pub(crate) struct Line {
    /// The start of the line (all of it unless it is very long).
    pub head: Vec<u8>,
    /// Its length in characters (UTF-8 lead bytes and invalid bytes).
    pub chars: usize,
}

/// Reads the next line into `line` (a final line without `\n` counts; a
/// `\r` before the `\n` is dropped). False at the end of the input.
pub(crate) fn read_line(reader: &mut impl BufRead, line: &mut Line) -> io::Result<bool> {
    line.head.clear();
    line.chars = 0;
    // Bytes of the line so far, without the `\n`.
    let mut bytes = 0;
    let mut last = 0u8;
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            if !any {
                return Ok(false);
            }
            break;
        }
        any = true;
        let (chunk, used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], at + 1, true),
            None => (buf, buf.len(), false),
        };
        bytes += chunk.len();
        if let Some(&byte) = chunk.last() {
            last = byte;
        }
        line.chars += chunk.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        let room = KEEP_BYTES.saturating_sub(line.head.len());
        line.head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if done {
            break;
        }
    }
    if last == b'\r' {
        line.chars -= 1;
        if line.head.len() == bytes {
            line.head.pop();
        }
    }
    Ok(true)
}

/// Skips up to `n` lines; how many there were.
fn skip_lines(reader: &mut impl BufRead, n: usize) -> io::Result<usize> {
    let mut skipped = 0;
    while skipped < n && reader.skip_until(b'\n')? > 0 {
        skipped += 1;
    }
    Ok(skipped)
}

/// Counts the lines left (a final line without `\n` counts).
fn count_lines(reader: &mut impl BufRead) -> io::Result<usize> {
    let mut lines = 0;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else { break };
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        last = end;
        let len = buf.len();
        reader.consume(len);
    }
    Ok(lines + usize::from(last != b'\n'))
}

/// Appends line `number` in `cat -n` style: the number right-aligned to
/// width 6, a tab, the text (invalid UTF-8 as U+FFFD), and a newline. A
/// line over [`MAX_LINE_CHARS`] characters is cut at a character boundary
/// with a marker giving its length.
pub(crate) fn render_line(out: &mut String, number: usize, line: &Line) {
    let text = String::from_utf8_lossy(&line.head);
    if line.chars > MAX_LINE_CHARS {
        let end = text
            .char_indices()
            .nth(MAX_LINE_CHARS)
            .map_or(text.len(), |(at, _)| at);
        let _ = writeln!(
            out,
            "{number:>6}\t{}… [line cut: {} characters, the first {MAX_LINE_CHARS} shown]",
            &text[..end],
            line.chars
        );
    } else {
        let _ = writeln!(out, "{number:>6}\t{text}");
    }
}

/// Bytes kept free under [`MAX_OUTPUT_BYTES`] for the note after a window
/// (its longest form is about 200 bytes).
const NOTE_ROOM: usize = 512;

/// Why a window ended before the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// `limit` lines were shown (or the default 2000).
    Limit,
    /// The next line would have made the result too large.
    Size,
}

/// The note after a window `start..=end` that did not reach the end of a
/// file of `total` lines (`None`: not counted, the file is too large).
pub(crate) fn window_note(start: usize, end: usize, total: Option<usize>, stop: Stop) -> String {
    let of = total.map_or_else(
        || "; the file goes on past them".to_owned(),
        |total| format!(" of {total}"),
    );
    let why = match stop {
        Stop::Limit => String::new(),
        Stop::Size => format!(
            " (more would make the result larger than {} KB)",
            MAX_OUTPUT_BYTES / 1024
        ),
    };
    format!(
        "(Showing lines {start}-{end}{of}{why}. To read on, call Read again with offset={}; \
         use offset and limit to read any other part.)",
        end + 1
    )
}

/// What a window showed.
struct Window {
    text: String,
    shown: usize,
    stop: Option<Stop>,
    total: Option<usize>,
}

/// Reads `path` (`size` bytes long) as text: the window of `limit` lines
/// (default 2000) from line `offset` (default 1).
pub(crate) fn read(
    path: &Path,
    size: u64,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<Output, ToolError> {
    let shown_path = path.display();
    if size == 0 {
        return Ok(Output::text(format!(
            "(The file {shown_path} exists but is empty: it has no lines.)"
        ))
        .with_metadata(metadata(path, Some(0), 1, 0, false)));
    }
    let file = File::open(path).map_err(|err| read_error(path, err))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    refuse_binary(path, &mut reader)?;
    if size > MAX_UNPAGED_BYTES && offset.is_none() && limit.is_none() {
        let lines = if size <= MAX_COUNTED_BYTES {
            let lines = count_lines(&mut reader).map_err(|err| read_error(path, err))?;
            format!(", {}", plural(lines, "line", "lines"))
        } else {
            String::new()
        };
        return Err(ToolError::invalid_input(format!(
            "{shown_path} is too large to read at once ({}{lines}; the limit without offset and \
             limit is {} KB). Read it in parts: offset=1 with limit=2000 for the first 2000 \
             lines, then offset=2001, and so on; or search it with Grep for the part you need.",
            human_size(size),
            MAX_UNPAGED_BYTES / 1024
        )));
    }
    let start = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    let window =
        read_window(&mut reader, size, start, limit).map_err(|err| read_error(path, err))?;
    if window.shown == 0 {
        let total = window.total.unwrap_or(start - 1);
        return Ok(Output::text(format!(
            "(The file {shown_path} has only {}, so offset {start} is past its end. Read it \
             with an offset from 1 to {total}.)",
            plural(total, "line", "lines")
        ))
        .with_metadata(metadata(path, Some(total), start, 0, false)));
    }
    let mut text = window.text;
    let truncated = window.stop.is_some();
    if let Some(stop) = window.stop {
        let end = start + window.shown - 1;
        text.push('\n');
        text.push_str(&window_note(start, end, window.total, stop));
    } else {
        text.pop();
    }
    Ok(Output::text(text).with_metadata(metadata(
        path,
        window.total,
        start,
        window.shown,
        truncated,
    )))
}

/// Refuses a file whose first [`SNIFF_BYTES`] look binary, then rewinds
/// `reader` to its start.
fn refuse_binary(path: &Path, reader: &mut BufReader<File>) -> Result<(), ToolError> {
    let mut sample = Vec::with_capacity(SNIFF_BYTES);
    reader
        .by_ref()
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut sample)
        .map_err(|err| read_error(path, err))?;
    let why = match sniff(&sample) {
        None => {
            return io::Seek::rewind(reader).map_err(|err| read_error(path, err));
        }
        Some(Binary::Nul(at)) => format!("it has a NUL byte at offset {at}"),
        Some(Binary::InvalidUtf8(n)) => format!(
            "{n} invalid UTF-8 sequences in its first {} KB",
            SNIFF_BYTES / 1024
        ),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    Err(ToolError::invalid_input(format!(
        "{} is a binary file, not text ({why}), so Read does not show it. Read can show text \
         files, images (PNG, JPEG, GIF, WebP) and notebooks. If it is text in another encoding, \
         convert it first (e.g. `iconv -f latin1 -t utf-8 {name}`); to inspect the bytes, use a \
         shell command such as `xxd {name} | head`.",
        path.display()
    )))
}

/// Reads lines `start..start + limit` (1-based) into `cat -n` text, each
/// ending in a newline, stopping early before the text grows past
/// [`MAX_OUTPUT_BYTES`]; counts the file's lines when that is cheap.
fn read_window(
    reader: &mut impl BufRead,
    size: u64,
    start: usize,
    limit: usize,
) -> io::Result<Window> {
    let skipped = skip_lines(reader, start - 1)?;
    if skipped < start - 1 {
        return Ok(Window {
            text: String::new(),
            shown: 0,
            stop: None,
            total: Some(skipped),
        });
    }
    let mut text = String::new();
    let mut line = Line::default();
    let mut rendered = String::new();
    let mut shown = 0;
    let mut stop = None;
    while shown < limit {
        if !read_line(reader, &mut line)? {
            break;
        }
        rendered.clear();
        render_line(&mut rendered, start + shown, &line);
        // Room is left for the note that says where to go on.
        if shown > 0 && text.len() + rendered.len() > MAX_OUTPUT_BYTES - NOTE_ROOM {
            stop = Some(Stop::Size);
            break;
        }
        text.push_str(&rendered);
        shown += 1;
    }
    // The line read but not shown, when the size cap stopped the window.
    let unshown = usize::from(stop.is_some());
    let total = if size <= MAX_COUNTED_BYTES {
        Some(start - 1 + shown + unshown + count_lines(reader)?)
    } else {
        let more = unshown > 0 || !reader.fill_buf()?.is_empty();
        (!more).then_some(start - 1 + shown)
    };
    if stop.is_none() && total != Some(start - 1 + shown) {
        stop = Some(Stop::Limit);
    }
    Ok(Window {
        text,
        shown,
        stop,
        total,
    })
}

/// The metadata of a text read.
fn metadata(
    path: &Path,
    total: Option<usize>,
    start: usize,
    shown: usize,
    truncated: bool,
) -> kaizen_sdk::serde_json::Value {
    json!({
        "path": path.display().to_string(),
        "type": "text",
        "total_lines": total,
        "start_line": start,
        "lines_shown": shown,
        "truncated": truncated,
    })
}

#[cfg(test)]
mod tests;
