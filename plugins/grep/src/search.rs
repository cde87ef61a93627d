//! The search: the walk, one reused searcher for every file (configured as
//! `rg` configures it), a sink per output mode, and the rendered result.

use std::io;
use std::path::Path;
use std::time::SystemTime;

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink};
use kaizen_sdk::prelude::*;

use crate::filters::{matcher, overrides, types};
use crate::fs::{Contents, Dir, File, Fs};
use crate::output::{Lines, MAX_CHARS, plural, push_number};
use crate::sink::{AnyMatch, ContentSink, CountMatches};
use crate::walk::{Unit, Walker};
use crate::{Target, shard};

/// What the result lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Matching lines with their context (`rg`).
    Content,
    /// Paths of files with a match (`rg -l`).
    FilesWithMatches,
    /// Matching lines per file (`rg -c`).
    Count,
}

/// Everything about a search but the pattern and where.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Split a files or count search across instances (see [`shard`])
    /// when there are at least this many directories per instance.
    pub shard_min: usize,
    /// What the result lists.
    pub mode: Mode,
    /// `-i`.
    pub case_insensitive: bool,
    /// `-n` (content mode).
    pub line_numbers: bool,
    /// `-B` (content mode).
    pub before: usize,
    /// `-A` (content mode).
    pub after: usize,
    /// `-U --multiline-dotall`.
    pub multiline: bool,
    /// `--glob` patterns (`!` excludes).
    pub globs: Vec<String>,
    /// `--type`.
    pub file_type: Option<String>,
    /// Result lines skipped first.
    pub offset: usize,
    /// Most result lines kept.
    pub head_limit: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            shard_min: shard::MIN_DIRS,
            mode: Mode::FilesWithMatches,
            case_insensitive: false,
            line_numbers: true,
            before: 0,
            after: 0,
            multiline: false,
            globs: Vec::new(),
            file_type: None,
            offset: 0,
            head_limit: None,
        }
    }
}

/// Searches `target` for `pattern` and renders the result.
pub(crate) fn run(target: &Target, pattern: &str, options: &Options) -> Result<Output, ToolError> {
    let matcher = matcher(pattern, options)?;
    let fs = Fs::new();
    let mut search = Search::new(options, &matcher, matches!(target, Target::File(_)));
    match target {
        Target::File(path) => search.explicit(&fs, path),
        Target::Dir(dir) => {
            let mut walker = walker(&fs, dir, options)?;
            let cannot_walk = |err: io::Error| {
                ToolError::failed(format!(
                    "Cannot read the directory {}: {err}",
                    dir.display()
                ))
            };
            let width = shard::width();
            if options.mode == Mode::Content || width < 2 {
                walker
                    .walk(dir, &mut |dir, name, path| search.file(dir, name, path))
                    .map_err(cannot_walk)?;
            } else {
                let units = shard::plan(&mut walker, dir, width).map_err(cannot_walk)?;
                if shard::dirs(&units) >= options.shard_min.saturating_mul(width) {
                    search.split(pattern, dir, &units, width, &fs, &mut walker);
                } else {
                    search.units(&fs, &mut walker, &units);
                }
            }
            search.unreadable += walker.unreadable();
        }
    }
    Ok(search.finish())
}

/// Walks and searches `units` of a search of `root` for `pattern` in files
/// or count mode: one shard's work.
pub(crate) fn search_units(
    pattern: &str,
    options: &Options,
    root: &Path,
    units: &[Unit],
) -> Result<shard::Found, ToolError> {
    let matcher = matcher(pattern, options)?;
    let fs = Fs::new();
    let mut walker = walker(&fs, root, options)?;
    let mut search = Search::new(options, &matcher, false);
    search.units(&fs, &mut walker, units);
    search.unreadable += walker.unreadable();
    Ok(shard::Found {
        files: search
            .found
            .into_iter()
            .map(|found| (found.path, millis(found.modified)))
            .collect(),
        counts: search.counts,
        unreadable: search.unreadable,
    })
}

/// A walk from `root` with the `--glob` and `--type` filters of `options`.
fn walker<'f>(fs: &'f Fs, root: &Path, options: &Options) -> Result<Walker<'f>, ToolError> {
    let overrides = if options.globs.is_empty() {
        None
    } else {
        Some(overrides(root, &options.globs)?)
    };
    let types = options.file_type.as_deref().map(types).transpose()?;
    Ok(Walker::new(fs, overrides, types))
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}

/// A file with a match, for files mode.
#[derive(Debug)]
struct Found {
    path: String,
    modified: SystemTime,
}

/// Where a file's contents are searched from.
enum Source<'b> {
    /// The file, read whole.
    Slice(&'b [u8]),
    /// The file at this path, read as a stream.
    Path(&'b Path),
}

impl Source<'_> {
    /// Runs `searcher` over the contents.
    fn search<S: Sink<Error = io::Error>>(
        &self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        sink: S,
    ) -> io::Result<()> {
        match self {
            Source::Slice(bytes) => searcher.search_slice(matcher, bytes, sink),
            Source::Path(path) => searcher.search_path(matcher, path, sink),
        }
    }
}

/// The state of one search across files.
struct Search<'m> {
    options: &'m Options,
    matcher: &'m RegexMatcher,
    searcher: Searcher,
    /// Files mode: the files with a match.
    found: Vec<Found>,
    /// Content mode: the result lines.
    lines: Lines,
    /// Count mode: each file with matches and how many, in walk order.
    counts: Vec<(String, u64)>,
    /// Files with a match (content and count modes).
    files: usize,
    /// Count mode: matching lines in all.
    matches: u64,
    /// Files and directories that could not be read.
    unreadable: usize,
    /// The contents of the file being searched.
    buf: Vec<u8>,
}

impl<'m> Search<'m> {
    /// A search with `matcher`; `explicit` when the target is a single
    /// file, which is searched even when it looks binary (`rg FILE` does).
    fn new(options: &'m Options, matcher: &'m RegexMatcher, explicit: bool) -> Self {
        let content = options.mode == Mode::Content;
        let searcher = SearcherBuilder::new()
            .line_number(content && options.line_numbers)
            .before_context(if content { options.before } else { 0 })
            .after_context(if content { options.after } else { 0 })
            .multi_line(options.multiline)
            .binary_detection(if explicit {
                BinaryDetection::convert(0)
            } else {
                BinaryDetection::quit(0)
            })
            .build();
        Self {
            options,
            matcher,
            searcher,
            found: Vec::new(),
            lines: Lines::new(options.offset, options.head_limit, MAX_CHARS),
            counts: Vec::new(),
            files: 0,
            matches: 0,
            unreadable: 0,
            buf: Vec::new(),
        }
    }

    /// Reads and searches the file `name` of `dir`, at `path`; a file
    /// that looks binary is skipped.
    fn file(&mut self, dir: &Dir, name: &str, path: &str) {
        match dir.read_file(name, &mut self.buf, true) {
            Ok(file) => self.search(path, file),
            Err(_) => self.unreadable += 1,
        }
    }

    /// Walks and searches `units`, in order.
    fn units(&mut self, fs: &Fs, walker: &mut Walker<'_>, units: &[Unit]) {
        walker.walk_units(units, &mut |dir, name, path| match dir {
            Some(dir) => self.file(dir, name, path),
            None => self.file_at(fs, path),
        });
    }

    /// Reads and searches the file at `path` found by a walk (binary files
    /// are skipped).
    fn file_at(&mut self, fs: &Fs, path: &str) {
        let full = Path::new(path);
        let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
            self.unreadable += 1;
            return;
        };
        match fs.open_dir(parent) {
            Ok(dir) => self.file(&dir, &name.to_string_lossy(), path),
            Err(_) => self.unreadable += 1,
        }
    }

    /// Searches `units` of the walk of `root` in shards, `width` at a
    /// time, and takes in what they found, in walk order. A shard that
    /// failed is searched here, with `walker` (the walk that made the
    /// units).
    fn split(
        &mut self,
        pattern: &str,
        root: &Path,
        units: &[Unit],
        width: usize,
        fs: &Fs,
        walker: &mut Walker<'_>,
    ) {
        // More runs than shards at once: the host starts the next as one
        // finishes, which evens out runs of unequal size.
        let runs = shard::runs(units, width * shard::RUNS_PER_SHARD);
        let jobs = runs
            .iter()
            .map(|run| shard::job(pattern, self.options, root, run))
            .collect();
        for (run, result) in runs.iter().zip(shard::run(jobs)) {
            match result {
                Ok(found) => {
                    self.found
                        .extend(found.files.into_iter().map(|(path, ms)| Found {
                            path,
                            modified: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(ms),
                        }));
                    for (_, n) in &found.counts {
                        self.files += 1;
                        self.matches += n;
                    }
                    self.counts.extend(found.counts);
                    self.unreadable += found.unreadable;
                }
                Err(why) => {
                    kaizen_sdk::log::warn(format!(
                        "a shard of the search failed ({why}); searching its files here"
                    ));
                    self.units(fs, walker, run);
                }
            }
        }
    }

    /// Reads and searches the file at `path`, given explicitly: searched
    /// even when it looks binary, like `rg FILE`.
    fn explicit(&mut self, fs: &Fs, path: &Path) {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            self.unreadable += 1;
            return;
        };
        let read = fs
            .open_dir(parent)
            .and_then(|dir| dir.read_file(&name.to_string_lossy(), &mut self.buf, false));
        match read {
            Ok(file) => self.search(&path.to_string_lossy(), file),
            Err(_) => self.unreadable += 1,
        }
    }

    /// Searches a file that was read (or is too large to hold, and is
    /// searched as a stream from `path`).
    fn search(&mut self, path: &str, file: File) {
        let source = match file.contents {
            Contents::Binary => return,
            Contents::Text => Source::Slice(&self.buf),
            Contents::Large => Source::Path(Path::new(path)),
        };
        let (searcher, matcher) = (&mut self.searcher, self.matcher);
        let result = match self.options.mode {
            Mode::FilesWithMatches => {
                let mut sink = AnyMatch(false);
                let result = source.search(searcher, matcher, &mut sink);
                if sink.0 {
                    self.found.push(Found {
                        path: path.to_owned(),
                        modified: file.modified,
                    });
                }
                result
            }
            Mode::Count => {
                let mut sink = CountMatches(0, self.options.multiline.then_some(matcher));
                let result = source.search(searcher, matcher, &mut sink);
                if sink.0 > 0 {
                    self.files += 1;
                    self.matches += sink.0;
                    self.counts.push((path.to_owned(), sink.0));
                }
                result
            }
            Mode::Content => {
                let mut sink = ContentSink {
                    lines: &mut self.lines,
                    matcher,
                    path,
                    separate: self.options.before > 0 || self.options.after > 0,
                    started: false,
                    binary: false,
                    hidden: 0,
                };
                let result = source.search(searcher, matcher, &mut sink);
                if sink.started || sink.hidden > 0 {
                    self.files += 1;
                }
                result
            }
        };
        if result.is_err() {
            self.unreadable += 1;
        }
    }

    /// The rendered result.
    fn finish(mut self) -> Output {
        let (text, metadata) = match self.options.mode {
            Mode::FilesWithMatches => {
                let total = self.found.len();
                self.found.sort_by(|a, b| {
                    b.modified
                        .cmp(&a.modified)
                        .then_with(|| a.path.cmp(&b.path))
                });
                for found in &self.found {
                    self.lines.push(|out| out.push_str(&found.path));
                }
                let text = match self.lines.finish("files") {
                    None => "No files found".to_owned(),
                    Some((list, note)) => {
                        let head = format!("Found {}", plural(total as u64, "file", "files"));
                        join([Some(head), Some(list), note])
                    }
                };
                (
                    text,
                    json!({ "mode": "files_with_matches", "numFiles": total }),
                )
            }
            Mode::Count => {
                for (path, n) in &self.counts {
                    self.lines.push(|out| {
                        out.push_str(path);
                        out.push(':');
                        push_number(out, *n);
                    });
                }
                let (files, matches) = (self.files, self.matches);
                let (one, many) = if self.options.multiline {
                    ("match", "matches")
                } else {
                    ("matching line", "matching lines")
                };
                let text = match self.lines.finish("files") {
                    None => "No matches found".to_owned(),
                    Some((list, note)) => {
                        let total = format!(
                            "Found {} in {}.",
                            plural(matches, one, many),
                            plural(files as u64, "file", "files")
                        );
                        join([Some(list), note, Some(total)])
                    }
                };
                (
                    text,
                    json!({ "mode": "count", "numFiles": files, "numMatches": matches }),
                )
            }
            Mode::Content => {
                let (files, total) = (self.files, self.lines.total());
                let text = match self.lines.finish("lines") {
                    None => "No matches found".to_owned(),
                    Some((lines, note)) => join([Some(lines), note]),
                };
                (
                    text,
                    json!({ "mode": "content", "numFiles": files, "numLines": total }),
                )
            }
        };
        let text = if self.unreadable > 0 {
            format!(
                "{text}\n[{} could not be read and {} skipped.]",
                plural(
                    self.unreadable as u64,
                    "file or directory",
                    "files or directories"
                ),
                if self.unreadable == 1 { "was" } else { "were" }
            )
        } else {
            text
        };
        Output::text(text).with_metadata(metadata)
    }
}

/// The non-empty parts, one per line.
fn join<const N: usize>(parts: [Option<String>; N]) -> String {
    parts
        .into_iter()
        .flatten()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
