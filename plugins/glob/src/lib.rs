//! `glob`: the built-in `Glob` tool, which finds files by name pattern the
//! way Claude Code's tool of the same name does.
//!
//! The pattern is a glob (`globset`, with `*` not crossing `/`) matched
//! against each file's path relative to the search directory; the walk
//! (`ignore`, ripgrep's walker) respects `.gitignore` and `.ignore` files,
//! includes hidden files and skips `.git` directories. Results are absolute
//! paths, newest modification first.
//!
//! The search logic is plain Rust over `std::fs` and is tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml`.

use kaizen_sdk::paths::{check_granted, normalize};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use kaizen_sdk::prelude::*;

/// At most this many paths are listed; a note says how many more matched.
const LIMIT: usize = 100;

/// What an empty result says, exactly.
const NO_FILES: &str = "No files found";

/// Input of `Glob`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct GlobInput {
    /// The glob pattern to match file paths against, relative to the search directory, e.g. "**/*.rs", "src/**/*.{ts,tsx}" or "*.md" (top level only).
    pattern: String,
    /// The directory to search in. Defaults to the current working directory. Must be an absolute path or relative to it; omit it rather than passing null/undefined.
    path: Option<String>,
}

/// The `Glob` tool.
struct Glob;

impl Tool for Glob {
    const NAME: &'static str = "Glob";
    const DESCRIPTION: &'static str = "\
Fast file pattern matching that works in codebases of any size.
- Finds files whose path, relative to the search directory, matches a glob pattern: \
\"**/*.js\", \"src/**/*.{ts,tsx}\", \"*.md\" (top level only), \"**/test_*.py\".
- `*` matches within one path component, `**` any number of directories, `?` one character, \
`[abc]` a character class, `{a,b}` alternatives.
- Lists files only (not directories), as absolute paths sorted by modification time, most \
recent first; at most 100, with a note when more matched.
- Respects .gitignore and .ignore files; hidden files are included; .git is skipped.
- Use it to find files by name. To search file contents, use a content search tool instead.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = GlobInput;

    fn call(ctx: &CallContext, input: GlobInput) -> Result<Output, ToolError> {
        let cwd = if ctx.cwd.is_empty() {
            &ctx.workspace
        } else {
            &ctx.cwd
        };
        glob(Path::new(cwd), &input.pattern, input.path.as_deref())
    }
}

export_tools!(Glob);

/// One matching file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    /// Its absolute path.
    path: PathBuf,
    /// Its modification time (the epoch when unknown).
    modified: SystemTime,
}

/// The whole tool, for a call whose current directory is `cwd`.
fn glob(cwd: &Path, pattern: &str, path: Option<&str>) -> Result<Output, ToolError> {
    let dir = search_dir(cwd, path)?;
    let (base, glob) = split_pattern(&dir, pattern)?;
    // An absolute pattern, or one climbing out with `..`, names its own.
    check_readable(&base)?;
    let matcher = compile(&glob, pattern)?;
    let mut found = find(&base, &matcher, max_depth(&glob));
    sort(&mut found);
    let shown = found.len().min(LIMIT);
    Ok(Output::text(render(&found, LIMIT)).with_metadata(json!({
        "numFiles": shown,
        "totalFiles": found.len(),
        "truncated": found.len() > LIMIT,
    })))
}

/// The directory to search: `path` resolved against `cwd` (or `cwd` when
/// `path` is omitted or empty), which must be an existing directory.
fn search_dir(cwd: &Path, path: Option<&str>) -> Result<PathBuf, ToolError> {
    let Some(path) = path.map(str::trim).filter(|path| !path.is_empty()) else {
        return Ok(normalize(cwd));
    };
    let dir = normalize(&cwd.join(path));
    check_readable(&dir)?;
    match std::fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => Ok(dir),
        Ok(_) => Err(ToolError::invalid_input(format!(
            "{} is a file, not a directory. Pass the directory to search as `path` (e.g. {}), \
             and match file names with `pattern`.",
            dir.display(),
            dir.parent().unwrap_or(&dir).display()
        ))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Err(ToolError::not_found(format!(
            "The directory {} does not exist, or is outside the directories this tool may read \
             (the workspace and any added directories). Check the path, or omit `path` to \
             search the current working directory, {}.",
            dir.display(),
            cwd.display()
        ))),
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            Err(ToolError::permission_denied(format!(
                "The directory {} cannot be read ({err}); this tool may read only the workspace \
                 and any added directories. Search one of those instead.",
                dir.display()
            )))
        }
        Err(err) => Err(ToolError::from(err).context(dir.display())),
    }
}

/// Refuses a directory to search outside the granted ones, naming them.
fn check_readable(dir: &Path) -> Result<(), ToolError> {
    check_granted(
        dir,
        "read",
        ". Search inside them, or omit `path` to search the current working directory",
    )
}

/// Splits `pattern` into the directory its leading literal components name
/// (resolved against `dir`; an absolute pattern names its own) and the glob
/// to match below it: `src/**/*.rs` searches `<dir>/src` for `**/*.rs`, so
/// that only that subtree is walked. The last component always stays in the
/// glob. A leading `./` is dropped.
fn split_pattern(dir: &Path, pattern: &str) -> Result<(PathBuf, String), ToolError> {
    let components: Vec<&str> = pattern.split('/').collect();
    let last = components.len() - 1;
    let literal = components[..last]
        .iter()
        .take_while(|part| !part.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .count();
    let mut base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        dir.to_path_buf()
    };
    base.extend(components[..literal].iter().filter(|part| !part.is_empty()));
    let glob = components[literal..].join("/");
    if glob.is_empty() {
        return Err(ToolError::invalid_input(format!(
            "The pattern `{pattern}` names no files. Give a glob such as \"**/*.rs\" (every .rs \
             file below the search directory) or \"{pattern}*\" (the files in that directory)."
        )));
    }
    Ok((normalize(&base), glob))
}

/// Compiles `glob` (the part of `pattern` below the literal directories).
fn compile(glob: &str, pattern: &str) -> Result<GlobMatcher, ToolError> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|err| {
            ToolError::invalid_input(format!(
                "Invalid glob pattern `{pattern}`: {}. Use `*` for any characters within a \
                 name, `**/` for any number of directories, `?` for one character, `[abc]` for \
                 one of a set and `{{a,b}}` for alternatives; escape a literal metacharacter \
                 with a backslash or `[*]`.",
                err.kind()
            ))
        })
}

/// How deep below the search directory `glob` can match: its number of
/// components, unless `**` (or an alternative, which may hold `/`) lets it
/// match at any depth.
fn max_depth(glob: &str) -> Option<usize> {
    (!glob.contains("**") && !glob.contains('{')).then(|| glob.split('/').count())
}

/// The files below `base` whose path relative to `base` matches, walking
/// like `rg --files --hidden` without `.git`, at most `max_depth` levels
/// deep. Entries that cannot be read are skipped; a `base` that is not a
/// directory has no files.
fn find(base: &Path, matcher: &GlobMatcher, max_depth: Option<usize>) -> Vec<Found> {
    if !base.is_dir() {
        return Vec::new();
    }
    let walk = WalkBuilder::new(base)
        .hidden(false)
        .max_depth(max_depth)
        .current_dir(base)
        .filter_entry(|entry| {
            !(entry.file_name() == ".git" && entry.file_type().is_some_and(|t| t.is_dir()))
        })
        .build();
    walk.filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(|entry| {
            entry
                .path()
                .strip_prefix(base)
                .is_ok_and(|relative| matcher.is_match(relative))
        })
        .map(|entry| Found {
            modified: entry
                .metadata()
                .ok()
                .and_then(|meta| meta.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH),
            path: entry.into_path(),
        })
        .collect()
}

/// Most recently modified first; equal times by path.
fn sort(found: &mut [Found]) {
    found.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// The text the model sees: one path per line, at most `limit`, then a
/// note on how many more matched.
fn render(found: &[Found], limit: usize) -> String {
    if found.is_empty() {
        return NO_FILES.to_owned();
    }
    let mut text = found
        .iter()
        .take(limit)
        .map(|found| found.path.to_string_lossy())
        .collect::<Vec<_>>()
        .join("\n");
    if found.len() > limit {
        let more = found.len() - limit;
        text.push_str(&format!(
            "\n(Results are truncated: {more} more {} matched, {} in all. Use a more specific \
             pattern or path to narrow the search.)",
            if more == 1 { "file" } else { "files" },
            found.len()
        ));
    }
    text
}

#[cfg(test)]
mod tests;
