//! The text the model sees: result lines with `offset`, `head_limit` and a
//! size cap applied as they are produced, long lines shortened, and the
//! notes that say what was left out.

/// Most bytes of result text (about as many characters for source code).
pub(crate) const MAX_CHARS: usize = 30_000;

/// Lines longer than this many bytes are shortened to a window around the
/// first match.
pub(crate) const MAX_LINE: usize = 500;

/// How much of a long line is shown before its first match.
const LEAD: usize = 100;

/// Result lines (output lines, file paths or count entries), kept from
/// `offset` on, at most `head_limit` of them and at most [`MAX_CHARS`] in
/// all; the rest are only counted, so a caller may ask [`Lines::wants`]
/// before formatting one.
#[derive(Debug)]
pub(crate) struct Lines {
    text: String,
    offset: usize,
    limit: Option<usize>,
    cap: usize,
    total: usize,
    shown: usize,
    capped: bool,
}

impl Lines {
    /// No lines yet; `offset` lines are skipped before any is kept, then at
    /// most `limit` are kept and at most `cap` bytes.
    pub(crate) fn new(offset: usize, limit: Option<usize>, cap: usize) -> Self {
        Self {
            text: String::new(),
            offset,
            limit,
            cap,
            total: 0,
            shown: 0,
            capped: false,
        }
    }

    /// Whether the next line will be kept (and so is worth formatting).
    #[inline]
    pub(crate) fn wants(&self) -> bool {
        self.total >= self.offset && !self.capped && self.limit.is_none_or(|n| self.shown < n)
    }

    /// How many lines were produced so far, kept or not.
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// Produces one line, which `write` appends to the text (without a
    /// newline) if it is kept.
    #[inline]
    pub(crate) fn push(&mut self, write: impl FnOnce(&mut String)) {
        if self.wants() {
            let start = self.text.len();
            if start > 0 {
                self.text.push('\n');
            }
            write(&mut self.text);
            if self.text.len() > self.cap {
                self.text.truncate(start);
                self.capped = true;
            } else {
                self.shown += 1;
            }
        }
        self.total += 1;
    }

    /// The kept text and, when anything was left out, a note saying what
    /// (`unit` names the lines: "lines", "files", ...). `None` when no line
    /// was produced at all.
    pub(crate) fn finish(self, unit: &str) -> Option<(String, Option<String>)> {
        if self.total == 0 {
            return None;
        }
        let skipped = self.offset.min(self.total);
        let rest = self.total - skipped - self.shown;
        if self.shown == 0 && rest == 0 {
            let note = format!(
                "[offset {} skips all {} result {unit}; use a smaller offset.]",
                self.offset, self.total
            );
            return Some((String::new(), Some(note)));
        }
        let (first, last) = (skipped + 1, skipped + self.shown);
        let note = if rest > 0 {
            let why = if self.capped {
                format!("the output limit of {} characters", self.cap)
            } else {
                format!("head_limit {}", self.limit.unwrap_or(self.shown))
            };
            Some(format!(
                "[Showing {unit} {first}-{last} of {}: {rest} more not shown ({why}). Use offset: \
                 {last} to see the next ones, or narrow the search with a more specific pattern, \
                 path, glob or type.]",
                self.total
            ))
        } else if skipped > 0 {
            Some(format!(
                "[Showing {unit} {first}-{last} of {}.]",
                self.total
            ))
        } else {
            None
        };
        Some((self.text, note))
    }
}

/// Appends `line` (its terminator dropped, invalid UTF-8 replaced) to
/// `out`; a line longer than [`MAX_LINE`] is cut to a window starting a
/// little before `focus` (a byte offset, e.g. of the first match) and says
/// how long it was.
pub(crate) fn push_text(out: &mut String, line: &[u8], focus: usize) {
    let line = trim_terminator(line);
    if line.len() <= MAX_LINE {
        push_lossy(out, line);
        return;
    }
    let mut start = focus.min(line.len()).saturating_sub(LEAD);
    while start > 0 && is_continuation(line[start]) {
        start -= 1;
    }
    let mut end = (start + MAX_LINE).min(line.len());
    while end < line.len() && is_continuation(line[end]) {
        end -= 1;
    }
    if start > 0 {
        out.push('…');
    }
    push_lossy(out, &line[start..end]);
    out.push_str(&format!("… [line of {} characters shortened]", line.len()));
}

/// `line` without its trailing `\n` or `\r\n`.
pub(crate) fn trim_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Appends `bytes` as UTF-8, replacing invalid sequences.
fn push_lossy(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// Whether `byte` continues a UTF-8 sequence (so a cut there would split a
/// character).
fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Appends the decimal `n` without allocating.
pub(crate) fn push_number(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // The digits are ASCII.
    out.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// "1 file", "2 files": `n` and the unit, `one` if `n` is 1, else `many`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
