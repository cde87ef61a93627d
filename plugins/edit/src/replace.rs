//! Replacing strings in text: the matching rules of Edit and MultiEdit,
//! the errors that tell the model how to fix a call, and the `cat -n`
//! snippet of the result.

use std::fmt::Write as _;
use std::ops::Range;

use crate::text::{count_lines, line_of};

/// Lines of context shown around a change.
const CONTEXT_LINES: usize = 4;

/// Most lines a snippet shows.
const MAX_SNIPPET_LINES: usize = 40;

/// Lines in a snippet are cut to this many characters, like Read's.
const MAX_LINE_CHARS: usize = 2000;

/// Most match positions listed in an error.
const MAX_LISTED: usize = 10;

/// Why an edit could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditError {
    /// `old_string` and `new_string` are the same.
    Identical,
    /// `old_string` is empty, which only creates a file or fills an empty one.
    EmptyOld,
    /// `old_string` does not occur; the hint says what probably went wrong.
    NotFound { hint: Option<String> },
    /// `old_string` occurs `count` times (starting on `lines`) and
    /// `replace_all` is false.
    Ambiguous { count: usize, lines: Vec<usize> },
}

impl EditError {
    /// The message for the model, about the file `path`.
    pub fn message(&self, path: &str) -> String {
        match self {
            Self::Identical => "old_string and new_string are identical, so there is nothing to \
                 change. Put the replacement text in new_string."
                .to_owned(),
            Self::EmptyOld => format!(
                "old_string is empty, which only creates a new file (or fills an empty one), but \
                 {path} already has content. To change part of it, give that part as \
                 old_string; to replace all of it, use Write."
            ),
            Self::NotFound { hint } => {
                let hint = hint.as_deref().map_or(String::new(), |h| format!(" {h}"));
                format!(
                    "old_string was not found in {path}.{hint} Read the file again to see its \
                     current content, and copy old_string from it exactly, with the same \
                     indentation and line breaks."
                )
            }
            Self::Ambiguous { count, lines } => format!(
                "old_string occurs {count} times in {path} (starting on lines {}), but \
                 replace_all is false, so it is unclear which one to change. Add more of the \
                 surrounding lines to old_string so that it matches exactly one place, or set \
                 replace_all to true to change every occurrence.",
                list_lines(lines, *count)
            ),
        }
    }
}

/// "3, 8 and 12", or "3, 8, … (and 40 more)" for long lists.
fn list_lines(lines: &[usize], count: usize) -> String {
    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
    match shown.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] if count <= lines.len() => format!("{} and {last}", rest.join(", ")),
        _ => format!("{}, … and {} more", shown.join(", "), count - lines.len()),
    }
}

/// What an applied edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// How many places were replaced.
    pub count: usize,
    /// Where the first replacement is in the new text (bytes).
    pub first: Range<usize>,
}

/// Replaces `old` with `new` in `text`: the single occurrence, or every
/// one with `replace_all`. `text` is unchanged on error.
pub(crate) fn apply(
    text: &mut String,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Applied, EditError> {
    if old == new {
        return Err(EditError::Identical);
    }
    if old.is_empty() {
        return Err(EditError::EmptyOld);
    }
    if replace_all {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let mut count = 0;
        let mut first = 0..0;
        for (at, _) in text.match_indices(old) {
            out.push_str(&text[last..at]);
            if count == 0 {
                first = out.len()..out.len() + new.len();
            }
            out.push_str(new);
            last = at + old.len();
            count += 1;
        }
        if count == 0 {
            return Err(not_found(text, old));
        }
        out.push_str(&text[last..]);
        *text = out;
        return Ok(Applied { count, first });
    }
    // Overlapping occurrences count too: in "aaa", "aa" is ambiguous.
    let starts = occurrences(text, old);
    match starts.as_slice() {
        [] => Err(not_found(text, old)),
        [at] => {
            text.replace_range(*at..at + old.len(), new);
            Ok(Applied {
                count: 1,
                first: *at..at + new.len(),
            })
        }
        _ => Err(EditError::Ambiguous {
            count: starts.len(),
            lines: starts
                .iter()
                .take(MAX_LISTED)
                .map(|&at| line_of(text, at))
                .collect(),
        }),
    }
}

/// Every byte offset where `needle` starts in `text`, overlaps included.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        starts.push(at);
        // Step one character, not one byte, to stay on a boundary.
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    starts
}

/// The not-found error, with a hint when the cause is recognizable:
/// Read's line-number prefixes pasted in, or a passage whose first line
/// is there (exactly, or but for spacing) while the rest differs.
fn not_found(text: &str, old: &str) -> EditError {
    let lines: Vec<&str> = old.lines().filter(|l| !l.trim().is_empty()).collect();
    if !lines.is_empty() && lines.iter().all(|line| has_line_number_prefix(line)) {
        return EditError::NotFound {
            hint: Some(
                "It seems to include the line numbers Read shows before each line (like \
                 \"    12\\t\"); they are not part of the file, so leave them out."
                    .to_owned(),
            ),
        };
    }
    let Some(first) = lines.first() else {
        return EditError::NotFound { hint: None };
    };
    let exact = lines_where(text, |line| line.contains(first));
    let hint = if !exact.is_empty() && lines.len() > 1 {
        Some(format!(
            "Its first line is on line {} of the file, but the lines after it differ from \
             what the file has there.",
            list_lines(&exact, exact.len())
        ))
    } else {
        let spaced = lines_where(text, |line| line.trim() == first.trim());
        (!spaced.is_empty()).then(|| {
            format!(
                "Its first line matches line {} of the file except for indentation or \
                 spacing (tabs and spaces must match exactly).",
                list_lines(&spaced, spaced.len())
            )
        })
    };
    EditError::NotFound { hint }
}

/// Whether `line` starts like a line of Read's output: spaces, digits, a tab.
fn has_line_number_prefix(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && rest[digits..].starts_with('\t')
}

/// The 1-based numbers of up to [`MAX_LISTED`] lines of `text` that pass
/// `test`.
fn lines_where(text: &str, test: impl Fn(&str) -> bool) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| test(line))
        .map(|(i, _)| i + 1)
        .take(MAX_LISTED)
        .collect()
}

/// The lines around `changed` (a byte range of `text`) in `cat -n` style,
/// with a few lines of context, at most [`MAX_SNIPPET_LINES`] of them.
pub(crate) fn snippet(text: &str, changed: &Range<usize>) -> String {
    let total = count_lines(text);
    if total == 0 {
        return "(the file is now empty)".to_owned();
    }
    let first = line_of(text, changed.start.min(text.len()));
    let last_byte = changed
        .end
        .saturating_sub(1)
        .max(changed.start)
        .min(text.len());
    let last = line_of(text, last_byte).max(first);
    let from = first.saturating_sub(CONTEXT_LINES).max(1);
    let to = (last + CONTEXT_LINES).min(total);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate().skip(from - 1).take(to + 1 - from) {
        let number = i + 1;
        if number - from == MAX_SNIPPET_LINES {
            let _ = write!(out, "… ({} more lines)", to + 1 - number);
            break;
        }
        let line = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}… [line cut]", &line[..cut]),
            None => line.to_owned(),
        };
        let _ = writeln!(out, "{number:>6}\t{line}");
    }
    out.trim_end_matches('\n').to_owned()
}

#[cfg(test)]
mod tests;
