//! The sinks the searcher reports to, one per output mode, each doing no
//! work its mode does not need: files mode stops at the first match, count
//! mode only counts, content mode formats only the lines the output keeps.

use std::io;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkFinish, SinkMatch};

use crate::output::{Lines, MAX_LINE, plural, push_number, push_text, trim_terminator};

/// Files mode: whether the file has a match; stops at the first.
pub(crate) struct AnyMatch(pub bool);

impl Sink for AnyMatch {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.0 = true;
        Ok(false)
    }
}

/// Count mode: the number of matching lines, or of matches in a
/// multi-line search (as `rg -c` counts), which needs the matcher.
pub(crate) struct CountMatches<'a>(pub u64, pub Option<&'a RegexMatcher>);

impl Sink for CountMatches<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        match self.1 {
            None => self.0 += 1,
            Some(matcher) => {
                let mut found = 0;
                matcher
                    .find_iter(mat.bytes(), |_| {
                        found += 1;
                        true
                    })
                    .map_err(io::Error::other)?;
                self.0 += found.max(1);
            }
        }
        Ok(true)
    }
}

/// Content mode, one file: formats the lines `lines` keeps.
pub(crate) struct ContentSink<'a> {
    /// Where the lines go.
    pub lines: &'a mut Lines,
    /// The matcher, to find where a long line's match is.
    pub matcher: &'a RegexMatcher,
    /// The file's path, as shown.
    pub path: &'a str,
    /// Whether `--` separates this file's lines from earlier output.
    pub separate: bool,
    /// Whether this file produced a line yet.
    pub started: bool,
    /// Whether the file turned out binary (only when searched explicitly).
    pub binary: bool,
    /// Matching lines of a binary file, not shown.
    pub hidden: u64,
}

impl ContentSink<'_> {
    /// Produces one line: `path:N:text` (`sep` `:` for matches, `-` for
    /// context; without `N:` when line numbers are off).
    fn line(&mut self, sep: char, number: Option<u64>, text: &[u8], focus: usize) {
        if !self.started {
            self.started = true;
            if self.separate && self.lines.total() > 0 {
                self.lines.push(|out| out.push_str("--"));
            }
        }
        let path = self.path;
        self.lines.push(|out| {
            out.push_str(path);
            out.push(sep);
            if let Some(number) = number {
                push_number(out, number);
                out.push(sep);
            }
            push_text(out, text, focus);
        });
    }
}

impl Sink for ContentSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.binary {
            self.hidden += 1;
            return Ok(true);
        }
        let mut number = mat.line_number();
        for line in mat.lines() {
            let focus = if self.lines.wants() && line.len() > MAX_LINE {
                let text = trim_terminator(line);
                self.matcher
                    .find(text)
                    .ok()
                    .flatten()
                    .map_or(0, |m| m.start())
            } else {
                0
            };
            self.line(':', number, line, focus);
            number = number.map(|n| n + 1);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.binary {
            return Ok(true);
        }
        let mut number = context.line_number();
        for line in context.bytes().split_inclusive(|&b| b == b'\n') {
            self.line('-', number, line, 0);
            number = number.map(|n| n + 1);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.lines.push(|out| out.push_str("--"));
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(true)
    }

    fn finish(&mut self, _: &Searcher, _: &SinkFinish) -> Result<(), io::Error> {
        if self.hidden > 0 {
            let (path, hidden) = (self.path, self.hidden);
            self.started = true;
            self.lines.push(|out| {
                out.push_str(&format!(
                    "Binary file {path} matches ({} not shown)",
                    plural(hidden, "matching line", "matching lines")
                ));
            });
        }
        Ok(())
    }
}
