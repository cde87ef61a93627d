//! Path patterns of `Read(…)` and `Edit(…)` rules, read as Claude Code
//! documents them: gitignore patterns, anchored by their first characters.
//!
//! | written      | relative to                                   |
//! |--------------|-----------------------------------------------|
//! | `//abs/path` | the filesystem root                           |
//! | `~/path`     | the home directory                            |
//! | `/path`      | the rule origin's base (the project root for a project's settings), not the filesystem root |
//! | `./path`, `path` | the call's working directory              |
//!
//! Within that, gitignore's rules hold: `*` does not cross `/`, `**` does; a
//! pattern with no `/` but a trailing one (`.env`, `*.pem`, `secrets/`)
//! matches at any depth below its directory, while one with a `/` in it
//! (`src/*.ts`, `./.env`) is anchored there; and a pattern that matches a
//! directory matches everything inside it, so `Read(./secrets)` covers
//! `./secrets/key.pem`. A trailing `/` is accepted and read the same way
//! (this module never touches the filesystem, so it cannot tell a file
//! from a directory). Paths are compared after being made absolute and
//! lexically normalized; symbolic links are not followed.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// Where a pattern's relative part starts.
#[derive(Debug, Clone)]
enum Root {
    /// A directory known when the rule is read.
    Fixed(PathBuf),
    /// The call's working directory, `up` levels higher (`../x`).
    Cwd { up: usize },
}

/// A compiled `Read(…)`/`Edit(…)` path pattern.
#[derive(Debug, Clone)]
pub(crate) struct PathPattern {
    root: Root,
    /// The glob relative to the root; empty for the root itself and all below.
    glob: String,
    matcher: GlobMatcher,
}

impl PathPattern {
    /// Reads `spec`; `base` is the rule origin's directory, `home` expands `~`.
    pub fn parse(spec: &str, base: &Path, home: &Path) -> Result<Self, String> {
        let (root, rest, explicit) = if let Some(rest) = spec.strip_prefix("//") {
            (Root::Fixed(PathBuf::from("/")), rest, true)
        } else if spec == "~" {
            (Root::Fixed(home.to_owned()), "", true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (Root::Fixed(home.to_owned()), rest, true)
        } else if spec.starts_with('~') {
            return Err(format!(
                "`{spec}`: only `~/` (your home directory) is expanded; write `~/path` or an \
                 absolute `//path`"
            ));
        } else if let Some(rest) = spec.strip_prefix('/') {
            (Root::Fixed(base.to_owned()), rest, true)
        } else {
            (Root::Cwd { up: 0 }, spec, false)
        };
        let (root, rest, explicit) = leading_dots(root, rest, explicit);
        let rest = rest.trim_end_matches('/');
        if rest.split('/').any(|s| s == "..") {
            return Err(format!(
                "`{spec}`: `..` may only come at the start of a path pattern; write the \
                 directory it stands for instead"
            ));
        }
        // gitignore: a slash at the start or in the middle anchors the pattern.
        let anchored = explicit || rest.contains('/') || rest.starts_with("**");
        let glob = match (rest.is_empty(), anchored) {
            (true, _) => String::new(),
            (false, true) => rest.to_owned(),
            (false, false) => format!("**/{rest}"),
        };
        let matcher = GlobBuilder::new(if glob.is_empty() { "**" } else { &glob })
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| {
                format!(
                    "`{spec}` is not a valid path pattern ({}); use gitignore-style globs such \
                     as `./secrets/**` or `*.pem`",
                    e.kind()
                )
            })?
            .compile_matcher();
        Ok(PathPattern {
            root,
            glob,
            matcher,
        })
    }

    /// True when `path` (absolute, or relative to `cwd`) or a directory
    /// holding it matches.
    pub fn matches(&self, path: &Path, cwd: &Path) -> bool {
        let path = normalize(&cwd.join(path));
        let root = self.root_dir(cwd);
        let Ok(relative) = path.strip_prefix(&root) else {
            return false;
        };
        if self.glob.is_empty() {
            return true;
        }
        relative
            .ancestors()
            .filter(|p| !p.as_os_str().is_empty())
            .any(|p| self.matcher.is_match(p))
    }

    /// The absolute glob the pattern stands for when the working directory is
    /// `cwd`. A path matches when it or one of its parent directories does.
    pub fn absolute_glob(&self, cwd: &Path) -> String {
        let root = self.root_dir(cwd);
        let root = root.to_string_lossy();
        let root = root.trim_end_matches('/');
        let glob = if self.glob.is_empty() {
            "**"
        } else {
            &self.glob
        };
        format!("{root}/{glob}")
    }

    fn root_dir(&self, cwd: &Path) -> PathBuf {
        match &self.root {
            Root::Fixed(dir) => normalize(dir),
            Root::Cwd { up } => {
                let mut dir = normalize(cwd);
                for _ in 0..*up {
                    dir.pop();
                }
                dir
            }
        }
    }
}

/// Folds leading `./` and `../` into the root: `./x` is anchored at the
/// working directory, `../x` one level up.
fn leading_dots(mut root: Root, mut rest: &str, mut explicit: bool) -> (Root, &str, bool) {
    loop {
        let (segment, tail) = rest.split_once('/').unwrap_or((rest, ""));
        match segment {
            "." => explicit = true,
            ".." => {
                explicit = true;
                root = match root {
                    Root::Fixed(mut dir) => {
                        dir = normalize(&dir);
                        dir.pop();
                        Root::Fixed(dir)
                    }
                    Root::Cwd { up } => Root::Cwd { up: up + 1 },
                };
            }
            _ => return (root, rest, explicit),
        }
        rest = tail;
    }
}

/// Removes `.` and `..` components without touching the filesystem; `..` at
/// the root stays at the root, as the kernel does.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}
