//! `grep`: the built-in `Grep` tool, which searches file contents the way
//! Claude Code's tool of the same name does, with ripgrep's own engine.
//!
//! The pieces are ripgrep's crates compiled into the component: the regex
//! matcher (`grep-regex`, Rust regex syntax), the line-oriented searcher
//! (`grep-searcher`: binary detection, context lines, multi-line search,
//! BOM sniffing) and the walker (`ignore`: `.gitignore` inside git
//! repositories, `.ignore` and `.rgignore` files, file types, `--glob`
//! overrides). Hidden files are searched; version-control directories
//! (`.git` and friends) are not. Output follows `rg`: `path:line:text` for
//! matches, `path-line-text` for context, `--` between groups; absolute
//! paths throughout.
//!
//! A files or count search over a large tree is split across instances of
//! the plugin, one per core, through the host's `parallel` interface (see
//! [`shard`]); the results are the same as one search's.
//!
//! Files are read through [`fs`], which talks to `wasi:filesystem`
//! directly inside the component (far fewer host calls than `std::fs`) and
//! uses `std::fs` natively, so the whole search is tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml`.

mod filters;
mod fs;
mod output;
mod search;
mod shard;
mod sink;
mod walk;

use kaizen_sdk::paths::{check_granted, normalize};
use std::io;
use std::path::{Path, PathBuf};

use kaizen_sdk::prelude::*;

use crate::search::{Mode, Options};

/// Input of `Grep`; the field descriptions are what the model reads.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct GrepInput {
    /// The regular expression pattern to search for in file contents (Rust regex syntax, like ripgrep: literal braces, parentheses and other metacharacters need escaping, e.g. "interface\\{\\}" to find "interface{}").
    pattern: String,
    /// File or directory to search in (rg PATH). Defaults to the current working directory. Must be an absolute path or relative to it.
    path: Option<String>,
    /// Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}", "!*.min.js" to exclude) - maps to rg --glob. Several may be given separated by spaces.
    glob: Option<String>,
    /// File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than glob for standard file types.
    #[serde(rename = "type")]
    file_type: Option<String>,
    /// Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".
    output_mode: Option<OutputMode>,
    /// Case insensitive search (rg -i).
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    /// Show line numbers in output (rg -n). Requires output_mode: "content", ignored otherwise. Defaults to true.
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    /// Number of lines to show after each match (rg -A). Requires output_mode: "content", ignored otherwise.
    #[serde(rename = "-A")]
    after: Option<u32>,
    /// Number of lines to show before each match (rg -B). Requires output_mode: "content", ignored otherwise.
    #[serde(rename = "-B")]
    before: Option<u32>,
    /// Number of lines to show before and after each match (rg -C). Requires output_mode: "content", ignored otherwise.
    #[serde(rename = "-C")]
    context: Option<u32>,
    /// Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.
    multiline: Option<bool>,
    /// Limit output to the first N lines/entries, equivalent to "| head -N". Works across all output modes: content (output lines), files_with_matches (file paths), count (count entries). When unspecified, shows all results (up to an output size limit).
    head_limit: Option<u32>,
    /// Skip the first N lines/entries before applying head_limit, equivalent to "| tail -n +N+1 | head -N". Works across all output modes. Defaults to 0.
    offset: Option<u32>,
}

/// What `Grep` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "snake_case")]
enum OutputMode {
    /// Matching lines, `path:line:text`, with optional context.
    Content,
    /// The paths of the files with at least one match, newest first.
    FilesWithMatches,
    /// The number of matching lines per file, and a total.
    Count,
}

/// The `Grep` tool.
struct Grep;

impl Tool for Grep {
    const NAME: &'static str = "Grep";
    const DESCRIPTION: &'static str = "\
A powerful search tool built on ripgrep.

Usage:
- ALWAYS use Grep for search tasks. NEVER invoke `grep` or `rg` as a shell command. Grep has been \
optimized for correct permissions and access.
- Supports full regex syntax (e.g., \"log.*Error\", \"function\\s+\\w+\").
- Filter files with the glob parameter (e.g., \"*.js\", \"**/*.tsx\") or the type parameter \
(e.g., \"js\", \"py\", \"rust\").
- Output modes: \"content\" shows matching lines (path:line:text), \"files_with_matches\" \
shows only file paths (default; most recently modified first), \"count\" shows match counts \
per file and a total.
- Pattern syntax: uses ripgrep (not grep) - literal braces need escaping (use `interface\\{\\}` \
to find `interface{}` in Go code).
- Multiline matching: by default patterns match within single lines only. For cross-line \
patterns like `struct \\{[\\s\\S]*?field`, use `multiline: true`.
- Respects .gitignore (inside git repositories), .ignore and .rgignore files; hidden files are \
searched; .git is skipped; binary files are skipped.
- Output is capped at 30000 characters; page through large results with head_limit and offset.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = GrepInput;

    fn call(ctx: &CallContext, input: GrepInput) -> Result<Output, ToolError> {
        let cwd = if ctx.cwd.is_empty() {
            &ctx.workspace
        } else {
            &ctx.cwd
        };
        grep(Path::new(cwd), &input)
    }
}

export_tools!(Grep, shard::GrepShard);

/// The whole tool, for a call whose current directory is `cwd`.
fn grep(cwd: &Path, input: &GrepInput) -> Result<Output, ToolError> {
    let target = search_target(cwd, input.path.as_deref())?;
    let mode = match input.output_mode {
        None | Some(OutputMode::FilesWithMatches) => Mode::FilesWithMatches,
        Some(OutputMode::Content) => Mode::Content,
        Some(OutputMode::Count) => Mode::Count,
    };
    let context = input.context.unwrap_or(0) as usize;
    let options = Options {
        mode,
        case_insensitive: input.case_insensitive.unwrap_or(false),
        line_numbers: input.line_numbers.unwrap_or(true),
        before: input.before.map_or(context, |n| n as usize),
        after: input.after.map_or(context, |n| n as usize),
        multiline: input.multiline.unwrap_or(false),
        globs: input.glob.as_deref().map(split_globs).unwrap_or_default(),
        file_type: input
            .file_type
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        offset: input.offset.unwrap_or(0) as usize,
        head_limit: input.head_limit.map(|n| n as usize),
        shard_min: shard::MIN_DIRS,
    };
    search::run(&target, &input.pattern, &options)
}

/// What to search: a directory (walked) or one file (searched whatever the
/// ignore rules say, as `rg FILE` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A directory, walked recursively.
    Dir(PathBuf),
    /// A single file.
    File(PathBuf),
}

/// `path` resolved against `cwd` (or `cwd` itself when `path` is omitted or
/// empty), which must exist.
fn search_target(cwd: &Path, path: Option<&str>) -> Result<Target, ToolError> {
    let Some(path) = path.map(str::trim).filter(|path| !path.is_empty()) else {
        return Ok(Target::Dir(normalize(cwd)));
    };
    let target = normalize(&cwd.join(path));
    check_granted(
        &target,
        "read",
        ". Search inside them, or omit `path` to search the current working directory",
    )?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => Ok(Target::Dir(target)),
        Ok(_) => Ok(Target::File(target)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Err(ToolError::not_found(format!(
            "The path {} does not exist, or is outside the directories this tool may read (the \
             workspace and any added directories). Check the path (find files by name with \
             Glob), or omit `path` to search the current working directory, {}.",
            target.display(),
            cwd.display()
        ))),
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            Err(ToolError::permission_denied(format!(
                "The path {} cannot be read ({err}); this tool may read only the workspace and \
                 any added directories. Search one of those instead.",
                target.display()
            )))
        }
        Err(err) => Err(ToolError::from(err).context(target.display())),
    }
}

/// The `glob` input as separate `--glob` patterns, as Claude Code splits
/// it: on whitespace, and on commas outside patterns that use `{a,b}`
/// alternatives.
fn split_globs(globs: &str) -> Vec<String> {
    globs
        .split_whitespace()
        .flat_map(|glob| {
            if glob.contains('{') && glob.contains('}') {
                vec![glob]
            } else {
                glob.split(',').filter(|g| !g.is_empty()).collect()
            }
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests;
