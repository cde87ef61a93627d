//! The walk: `rg --hidden`'s traversal, with the `ignore` crate's
//! matchers (`Gitignore`, `Override`, `Types`) applied in its precedence,
//! over [`crate::fs`].
//!
//! The `ignore` crate's own walker reads directories through `std::fs`,
//! and probes every directory for `.gitignore`, `.ignore`, `.rgignore`,
//! `.git`, `.jj` and `.git/info/exclude` — six failing host calls per
//! directory in the component. This walk lists each directory once and
//! loads only the ignore files the listing shows, then matches exactly as
//! `ignore::WalkBuilder` does with `hidden(false)`:
//!
//! 1. a `--glob` override that matches decides (whitelist or ignore);
//! 2. else the ignore files of the directory and its parents, nearest
//!    first: `.rgignore`, then `.ignore`, then (inside a git or jj
//!    repository, up to its root) `.gitignore` and `.git/info/exclude`;
//! 3. else `--type`.
//!
//! Ignore files in the directories above the search root count too, as
//! far as they are readable. Symbolic links are not followed; directories
//! are sorted by name, so the order is stable.

use std::io;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use ignore::types::Types;
use kaizen_sdk::prelude::{JsonSchema, schemars};

use crate::fs::{Dir, Entry, Fs, Kind};

/// Version-control directories that are never searched (as Claude Code
/// excludes them).
const VCS_DIRS: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// The ignore rules one directory adds.
struct Level {
    /// `.rgignore`.
    custom: Gitignore,
    /// `.ignore`.
    ignore: Gitignore,
    /// `.gitignore`.
    git: Gitignore,
    /// `.git/info/exclude`.
    exclude: Gitignore,
    /// Whether the directory is the root of a git (or jj) repository.
    has_git: bool,
}

impl Level {
    /// The rules of the directory `dir`, whose entries `has` tells about;
    /// `None` when it adds none.
    fn new(dir: &Path, has: impl Fn(&str) -> bool) -> Option<Level> {
        let git_dir = has(".git");
        let has_git = git_dir || has(".jj");
        let load = |name: &str| {
            if has(name) {
                gitignore(dir, &dir.join(name))
            } else {
                Gitignore::empty()
            }
        };
        let level = Level {
            custom: load(".rgignore"),
            ignore: load(".ignore"),
            git: load(".gitignore"),
            exclude: if git_dir {
                gitignore(dir, &dir.join(".git/info/exclude"))
            } else {
                Gitignore::empty()
            },
            has_git,
        };
        let empty = level.custom.is_empty()
            && level.ignore.is_empty()
            && level.git.is_empty()
            && level.exclude.is_empty();
        (has_git || !empty).then_some(level)
    }
}

/// The rules in `file`, relative to `dir`; none when it cannot be read.
fn gitignore(dir: &Path, file: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    // Like `rg`, an unreadable or partly invalid ignore file is used as far
    // as it goes.
    let _ = builder.add(file);
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// A part of a walk: a file to search, or a directory to walk (its own
/// ignore rules and those above it apply), in walk order.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    kaizen_sdk::serde::Serialize,
    kaizen_sdk::serde::Deserialize,
    JsonSchema,
)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "snake_case")]
pub(crate) enum Unit {
    /// The file at this absolute path.
    File(String),
    /// The directory at this absolute path.
    Dir(String),
}

/// A walk over the files to search.
pub(crate) struct Walker<'a> {
    fs: &'a Fs,
    overrides: Option<Override>,
    types: Option<Types>,
    /// The rules of the directories above the current one, outermost
    /// first (directories without rules have no level).
    levels: Vec<Level>,
    /// How many of `levels` are repository roots.
    repos: usize,
    /// Directories and files that could not be read.
    unreadable: usize,
    /// Directories this deep below the root are not walked but handed to
    /// `defer` (see [`Walker::units`]).
    defer_depth: Option<usize>,
    /// How deep the walk is below its root.
    depth: usize,
    /// The directory whose rules (and its ancestors') `levels` holds, for
    /// [`Walker::walk_units`].
    entered: Option<PathBuf>,
}

impl<'a> Walker<'a> {
    /// A walk filtered by `overrides` (`--glob`) and `types` (`--type`).
    pub(crate) fn new(fs: &'a Fs, overrides: Option<Override>, types: Option<Types>) -> Self {
        Self {
            fs,
            overrides,
            types,
            levels: Vec::new(),
            repos: 0,
            unreadable: 0,
            defer_depth: None,
            depth: 0,
            entered: None,
        }
    }

    /// The walk of `root` cut at `depth`: its files and directories down
    /// to that depth, in walk order, with each directory `depth` below the
    /// root left whole as a [`Unit::Dir`] (after the ignore rules decided
    /// it is walked at all).
    pub(crate) fn units(&mut self, root: &Path, depth: usize) -> io::Result<Vec<Unit>> {
        let units = std::cell::RefCell::new(Vec::new());
        self.defer_depth = Some(depth);
        let walked = self.walk_with(
            root,
            &mut |_, _, path| units.borrow_mut().push(Unit::File(path.to_owned())),
            &mut |path| units.borrow_mut().push(Unit::Dir(path.to_owned())),
        );
        self.defer_depth = None;
        walked.map(|()| units.into_inner())
    }

    /// Walks `units` (from [`Walker::units`], any contiguous run of them),
    /// calling `visit` for each file to search in walk order: with its
    /// directory when the walk opened it. The rules above a unit are
    /// loaded once for units that share a parent.
    pub(crate) fn walk_units(
        &mut self,
        units: &[Unit],
        visit: &mut impl FnMut(Option<&Dir>, &str, &str),
    ) {
        for unit in units {
            let (Unit::File(path) | Unit::Dir(path)) = unit;
            let full = Path::new(path);
            let Some(parent) = full.parent() else {
                continue;
            };
            self.enter(parent);
            match unit {
                Unit::File(path) => visit(None, "", path),
                Unit::Dir(path) => match self.fs.open_dir(full) {
                    Ok(dir) => {
                        let mut at = path.clone();
                        self.walk_dir(&dir, &mut at, &mut |dir, name, path| {
                            visit(Some(dir), name, path)
                        });
                    }
                    Err(_) => self.unreadable += 1,
                },
            }
        }
    }

    /// Loads the rules of `dir` and its ancestors, unless they are loaded.
    fn enter(&mut self, dir: &Path) {
        if self.entered.as_deref() == Some(dir) {
            return;
        }
        while !self.levels.is_empty() {
            self.pop();
        }
        for ancestor in dir.ancestors().collect::<Vec<_>>().into_iter().rev() {
            let level = Level::new(ancestor, |name| {
                std::fs::symlink_metadata(ancestor.join(name)).is_ok()
            });
            self.push(level);
        }
        self.entered = Some(dir.to_path_buf());
    }

    /// How many directories (or files, as counted by the caller) could not
    /// be read.
    pub(crate) fn unreadable(&self) -> usize {
        self.unreadable
    }

    /// Walks the directory `root` (absolute), calling `visit(dir, name,
    /// path)` for each file to search: its directory, its name there and
    /// its absolute path. Fails only when `root` cannot be read.
    pub(crate) fn walk(
        &mut self,
        root: &Path,
        visit: &mut impl FnMut(&Dir, &str, &str),
    ) -> io::Result<()> {
        self.walk_with(root, visit, &mut |_| {})
    }

    fn walk_with(
        &mut self,
        root: &Path,
        visit: &mut impl FnMut(&Dir, &str, &str),
        defer: &mut impl FnMut(&str),
    ) -> io::Result<()> {
        self.entered = None;
        while !self.levels.is_empty() {
            self.pop();
        }
        let dir = self.fs.open_dir(root)?;
        for parent in root
            .ancestors()
            .skip(1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let level = Level::new(parent, |name| {
                std::fs::symlink_metadata(parent.join(name)).is_ok()
            });
            self.push(level);
        }
        let mut path = root.to_string_lossy().trim_end_matches('/').to_owned();
        let mut entries = Vec::new();
        dir.entries(&mut entries)?;
        self.depth = 0;
        self.walk_entries(&dir, &mut path, entries, visit, defer);
        Ok(())
    }

    /// Walks the directory `dir` at `path`.
    fn walk_dir(&mut self, dir: &Dir, path: &mut String, visit: &mut impl FnMut(&Dir, &str, &str)) {
        self.walk_dir_with(dir, path, visit, &mut |_| {});
    }

    fn walk_dir_with(
        &mut self,
        dir: &Dir,
        path: &mut String,
        visit: &mut impl FnMut(&Dir, &str, &str),
        defer: &mut impl FnMut(&str),
    ) {
        let mut entries = Vec::new();
        match dir.entries(&mut entries) {
            Ok(()) => self.walk_entries(dir, path, entries, visit, defer),
            Err(_) => self.unreadable += 1,
        }
    }

    /// Walks `entries`, those of the directory `dir` at `path`.
    fn walk_entries(
        &mut self,
        dir: &Dir,
        path: &mut String,
        mut entries: Vec<Entry>,
        visit: &mut impl FnMut(&Dir, &str, &str),
        defer: &mut impl FnMut(&str),
    ) {
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        let dir_path = if path.is_empty() { "/" } else { path.as_str() };
        let level = Level::new(Path::new(dir_path), |name| {
            entries
                .binary_search_by(|e| e.name.as_str().cmp(name))
                .is_ok()
        });
        let pushed = self.push(level);
        for entry in &entries {
            let len = path.len();
            path.push('/');
            path.push_str(&entry.name);
            match entry.kind {
                Kind::Dir if !VCS_DIRS.contains(&entry.name.as_str()) => {
                    if self.ignored(path, true) {
                        // Not walked.
                    } else if self.defer_depth == Some(self.depth + 1) {
                        defer(path);
                    } else {
                        match dir.open_dir(&entry.name) {
                            Ok(child) => {
                                self.depth += 1;
                                self.walk_dir_with(&child, path, visit, defer);
                                self.depth -= 1;
                            }
                            Err(_) => self.unreadable += 1,
                        }
                    }
                }
                Kind::File => {
                    if !self.ignored(path, false) {
                        visit(dir, &entry.name, path);
                    }
                }
                Kind::Dir | Kind::Other => {}
            }
            path.truncate(len);
        }
        if pushed {
            self.pop();
        }
    }

    /// Adds a directory's rules; whether there were any.
    fn push(&mut self, level: Option<Level>) -> bool {
        let Some(level) = level else { return false };
        self.repos += usize::from(level.has_git);
        self.levels.push(level);
        true
    }

    /// Drops the innermost directory's rules.
    fn pop(&mut self) {
        if let Some(level) = self.levels.pop() {
            self.repos -= usize::from(level.has_git);
        }
    }

    /// Whether the entry at `path` is filtered out, as
    /// `ignore::dir::Ignore::matched` decides.
    fn ignored(&self, path: &str, is_dir: bool) -> bool {
        if let Some(overrides) = &self.overrides {
            match overrides.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        if !self.levels.is_empty() && self.ignore_files(path, is_dir).is_ignore() {
            return true;
        }
        self.types
            .as_ref()
            .is_some_and(|types| types.matched(path, is_dir).is_ignore())
    }

    /// What the ignore files say about `path`: per kind of file, the
    /// nearest that matches; `.gitignore` and `exclude` only inside a
    /// repository and only up to its root.
    fn ignore_files(&self, path: &str, is_dir: bool) -> Match<()> {
        let any_git = self.repos > 0;
        let (mut custom, mut ignore, mut git, mut exclude) =
            (Match::None, Match::None, Match::None, Match::None);
        let mut saw_git = false;
        for level in self.levels.iter().rev() {
            if custom.is_none() {
                custom = level.custom.matched(path, is_dir).map(|_| ());
            }
            if ignore.is_none() {
                ignore = level.ignore.matched(path, is_dir).map(|_| ());
            }
            if any_git && !saw_git {
                if git.is_none() {
                    git = level.git.matched(path, is_dir).map(|_| ());
                }
                if exclude.is_none() {
                    exclude = level.exclude.matched(path, is_dir).map(|_| ());
                }
            }
            saw_git = saw_git || level.has_git;
        }
        custom.or(ignore).or(git).or(exclude)
    }
}
