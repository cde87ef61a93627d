//! The paths no plugin may touch through `wasi:filesystem`, even inside a
//! directory it may write: the configuration that decides what plugins
//! may do (`kaizen.toml`, `.kaizen/`, ... at the top of a writable
//! directory), read-only; and the host's own state (`KAIZEN_HOME`, the
//! compile cache), not there at all.
//!
//! A preopen grants a whole directory tree, so the guard sits in front of
//! wasmtime-wasi's filesystem (see [`super::guarded`]) and checks every
//! path an operation names where it really leads: the directory the
//! descriptor holds (as the kernel names it) joined with the path, its
//! parent resolved by the kernel, and a final symbolic link's target.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// What the guard protects and hides.
#[derive(Debug, Clone, Default)]
pub struct ProtectedPaths {
    /// Names that are configuration at the top of a writable directory:
    /// readable, never changed.
    pub read_only_names: Vec<String>,
    /// Paths that do not exist for plugins, wherever they are.
    pub hidden: Vec<PathBuf>,
    /// Absolute globs of paths the user's deny rules keep from reading
    /// (`Read(./.env)`): hidden like [`Self::hidden`], checked on every
    /// access, so files created later are covered too. A path is denied
    /// when it or a directory above it matches.
    pub denied_read: Vec<String>,
    /// Absolute globs of paths the user's deny rules keep from being
    /// changed (`Edit(/docs/**)`): read-only.
    pub denied_edit: Vec<String>,
    /// Paths that are configuration wherever they are (where a link named
    /// by [`Self::read_only_names`] really leads): readable, never changed.
    pub read_only: Vec<PathBuf>,
}

/// Absolute globs compiled for matching a path or any directory above it,
/// with the directories their literal parts name (`/ws/docs` for
/// `/ws/docs/**`): moving or removing one of those, or a directory above,
/// would carry what the glob protects out of its reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct PathGlobs(Option<globset::GlobSet>, Vec<PathBuf>);

impl PathGlobs {
    /// Compiles `globs` (`*` does not cross `/`); one that does not compile
    /// is logged and left out.
    pub fn new(globs: &[String]) -> Self {
        if globs.is_empty() {
            return Self(None, Vec::new());
        }
        let anchors = globs
            .iter()
            .map(|glob| {
                let literal = glob
                    .find(['*', '?', '[', '{'])
                    .map_or(glob.as_str(), |at| &glob[..at]);
                match literal.rsplit_once('/') {
                    Some((dir, _)) if !dir.is_empty() => PathBuf::from(dir),
                    _ => PathBuf::from("/"),
                }
            })
            .collect();
        let mut set = globset::GlobSetBuilder::new();
        for glob in globs {
            match globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
            {
                Ok(glob) => {
                    set.add(glob);
                }
                Err(err) => tracing::warn!("the path rule glob {glob} does not compile: {err}"),
            }
        }
        Self(set.build().ok(), anchors)
    }

    /// True when `path` or a directory above it matches.
    pub fn matches(&self, path: &Path) -> bool {
        let Some(set) = &self.0 else { return false };
        path.ancestors().any(|p| set.is_match(p))
    }

    /// True when changing `path` (renaming or removing it) would move
    /// what a glob protects: it matches, or it holds a glob's anchor.
    pub fn guards(&self, path: &Path) -> bool {
        self.matches(path) || self.1.iter().any(|anchor| anchor.starts_with(path))
    }

    fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// The entries a walk for [`existing_matches`] looks at before it stops.
const WALK_LIMIT: usize = 200_000;

/// The paths that exist now under `roots` (or anywhere, for a glob without
/// wildcards) and match one of `globs` (absolute, as in
/// [`ProtectedPaths::denied_read`]): what the OS sandbox covers when a
/// session starts, since it cannot check each access the way the file
/// guard does. A matching directory is taken whole; links are not
/// followed; the walk stops after a bound, with a warning.
pub fn existing_matches(globs: &[String], roots: &[PathBuf]) -> Vec<PathBuf> {
    let set = PathGlobs::new(globs);
    // A literal path, and the directory of `DIR/**` itself: covering the
    // directory (not only what is in it now) keeps a program from adding
    // to it, or renaming it out of the rule's reach.
    let mut found: Vec<PathBuf> = globs
        .iter()
        .map(|glob| glob.strip_suffix("/**").unwrap_or(glob))
        .filter(|path| !path.contains(['*', '?', '[', '{']))
        .map(PathBuf::from)
        .filter(|path| path.symlink_metadata().is_ok())
        .collect();
    if set.is_empty() {
        return found;
    }
    let mut stack: Vec<PathBuf> = roots.to_vec();
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                tracing::warn!(
                    "stopped looking for files the deny rules name after {WALK_LIMIT} entries; \
                     programs may still see later ones (the file tools never do)"
                );
                return found;
            }
            let path = entry.path();
            if set.matches(&path) {
                found.push(path);
            } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                stack.push(path);
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Why an operation on a path is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The path is configuration: it may be read, not changed.
    ReadOnly,
    /// The path is the host's own: it is not there.
    Hidden,
    /// A deny rule keeps the path from being read (or changed).
    Denied,
    /// A deny rule keeps the path from being changed.
    DeniedChange,
}

/// The guard of one plugin: its writable directories and what is protected
/// in them.
#[derive(Debug, Clone, Default)]
pub(crate) struct FsGuard {
    /// Canonical configuration paths, one per writable root and name.
    read_only: Vec<PathBuf>,
    /// Canonical hidden paths.
    hidden: Vec<PathBuf>,
    /// The plugin's own data directory, reachable though it lies inside a
    /// hidden one (`KAIZEN_HOME`).
    own: Option<PathBuf>,
    /// Paths deny rules keep from reading, then from changing.
    denied_read: PathGlobs,
    denied_edit: PathGlobs,
}

impl FsGuard {
    /// The guard for a plugin writing `writable` (its read-write preopens)
    /// with its data directory `own`, if any.
    pub fn new(writable: &[PathBuf], own: Option<&Path>, paths: &ProtectedPaths) -> Self {
        let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let read_only = writable
            .iter()
            .map(|dir| canonical(dir))
            .flat_map(|dir| paths.read_only_names.iter().map(move |name| dir.join(name)))
            .chain(paths.read_only.iter().map(|path| canonical(path)))
            .collect();
        let hidden = paths.hidden.iter().map(|path| canonical(path)).collect();
        Self {
            read_only,
            hidden,
            own: own.map(canonical),
            denied_read: PathGlobs::new(&paths.denied_read),
            denied_edit: PathGlobs::new(&paths.denied_edit),
        }
    }

    /// True when the guard has nothing to check.
    pub fn is_empty(&self) -> bool {
        self.read_only.is_empty()
            && self.hidden.is_empty()
            && self.denied_read.is_empty()
            && self.denied_edit.is_empty()
    }

    /// Whether `path` (absolute, real) may be read and, when `change`,
    /// changed.
    pub fn check_path(&self, path: &Path, change: bool) -> Result<(), Refusal> {
        let own = self.own.as_ref().is_some_and(|own| path.starts_with(own));
        if !own && self.hidden.iter().any(|hidden| path.starts_with(hidden)) {
            return Err(Refusal::Hidden);
        }
        if self.denied_read.matches(path) {
            return Err(Refusal::Denied);
        }
        if change && self.read_only.iter().any(|config| path.starts_with(config)) {
            return Err(Refusal::ReadOnly);
        }
        if change && (self.denied_edit.guards(path) || self.denied_read.guards(path)) {
            return Err(Refusal::DeniedChange);
        }
        Ok(())
    }

    /// Checks every place the operation naming `path` relative to the
    /// directory open as `dir_fd` may really touch (see the module docs);
    /// `follow` when it follows a final symbolic link.
    pub fn check_at(
        &self,
        dir_fd: RawFd,
        path: &str,
        change: bool,
        follow: bool,
    ) -> Result<(), Refusal> {
        if self.is_empty() {
            return Ok(());
        }
        let Some(dir) = fd_path(dir_fd) else {
            return Ok(());
        };
        let rel = Path::new(path);
        self.check_path(&normalize(&dir.join(rel)), change)?;
        let name = match rel.file_name() {
            Some(name) => name,
            // `.` or `..` at the end: the lexical check above covers it.
            None => return Ok(()),
        };
        let parent_rel = rel.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = match parent_rel {
            Some(parent_rel) => match open_path(dir_fd, parent_rel, true) {
                Some(fd) => {
                    let real = fd_path(fd.0);
                    match real {
                        Some(real) => real,
                        None => return Ok(()),
                    }
                }
                // No such parent: the operation will fail on its own.
                None => return Ok(()),
            },
            None => dir.clone(),
        };
        let target = parent.join(name);
        self.check_path(&target, change)?;
        if follow && let Some(link) = std::fs::read_link(&target).ok() {
            let resolved = match open_path(dir_fd, rel, false).and_then(|fd| fd_path(fd.0)) {
                Some(real) => real,
                // Dangling: what creating through it would create.
                None => normalize(&parent.join(link)),
            };
            self.check_path(&resolved, change)?;
        }
        Ok(())
    }
}

/// An fd closed when dropped.
struct Fd(RawFd);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.0) };
    }
}

/// `rel` opened `O_PATH` beneath the directory `dir_fd` (a directory when
/// `dir`), following links as the real operation would.
fn open_path(dir_fd: RawFd, rel: &Path, dir: bool) -> Option<Fd> {
    let c = CString::new(rel.as_os_str().as_bytes()).ok()?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if dir {
        flags |= libc::O_DIRECTORY;
    }
    // SAFETY: openat on a NUL-terminated path; the fd is owned by `Fd`.
    let fd = unsafe { libc::openat(dir_fd, c.as_ptr(), flags) };
    (fd >= 0).then_some(Fd(fd))
}

/// The path the kernel knows the open file `fd` by.
fn fd_path(fd: RawFd) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()
}

/// `path` with `.` and `..` taken out, without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn setup() -> (tempfile::TempDir, PathBuf, FsGuard, std::fs::File) {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".kaizen/plugins")).unwrap();
        std::fs::create_dir_all(root.join("home/.local/share/kaizen")).unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        let guard = FsGuard::new(
            std::slice::from_ref(&root),
            Some(&root.join("home/.local/share/kaizen/data/me")),
            &ProtectedPaths {
                read_only_names: vec!["kaizen.toml".into(), ".kaizen".into()],
                hidden: vec![root.join("home/.local/share/kaizen")],
                denied_read: vec![format!("{}/**/.env", root.display())],
                denied_edit: vec![format!("{}/docs/**", root.display())],
                // Where a configuration link leads.
                read_only: vec![root.join("conf")],
            },
        );
        let dir = std::fs::File::open(&root).unwrap();
        (ws, root, guard, dir)
    }

    #[test]
    fn deny_rules_refuse_reading_and_changing_where_they_match() {
        let (_ws, root, guard, dir) = setup();
        std::fs::create_dir_all(root.join("docs/api")).unwrap();
        std::fs::create_dir_all(root.join("app/config")).unwrap();
        let fd = dir.as_raw_fd();
        for path in [".env", "app/config/.env", "src/../.env"] {
            assert_eq!(
                guard.check_at(fd, path, false, true),
                Err(Refusal::Denied),
                "{path}"
            );
        }
        assert_eq!(
            guard.check_at(fd, "app/config/.env.example", false, true),
            Ok(())
        );
        assert_eq!(guard.check_at(fd, "docs/api/index.md", false, true), Ok(()));
        for path in ["docs/api/index.md", "docs/new.md", "docs", "."] {
            assert_eq!(
                guard.check_at(fd, path, true, true),
                Err(Refusal::DeniedChange),
                "{path}"
            );
        }
        // A link to a denied file is refused where it leads.
        std::os::unix::fs::symlink(root.join("app/config/.env"), root.join("src/innocent"))
            .unwrap();
        assert_eq!(
            guard.check_at(fd, "src/innocent", false, true),
            Err(Refusal::Denied)
        );
    }

    #[test]
    fn existing_matches_finds_what_the_sandbox_must_cover() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        for file in [".env", "a/b/.env", "a/b/keep.txt", "secrets/x/y.key"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let globs = vec![
            format!("{}/**/.env", root.display()),
            format!("{}/secrets", root.display()),
        ];
        let found = existing_matches(&globs, std::slice::from_ref(&root));
        assert_eq!(
            found,
            [
                root.join(".env"),
                root.join("a/b/.env"),
                root.join("secrets")
            ]
        );
        let literal = vec![format!("{}/a/b/keep.txt", root.display())];
        assert_eq!(existing_matches(&literal, &[]), [root.join("a/b/keep.txt")]);
        // `DIR/**` covers the directory itself: nothing can be added to it,
        // and it cannot be renamed out of the rule's reach.
        let tree = vec![format!("{}/a/**", root.display())];
        assert!(existing_matches(&tree, std::slice::from_ref(&root)).contains(&root.join("a")));
        // Not a directory above a wildcard (`ws/**/.env` does not cover ws).
        assert!(!found.contains(&root));
    }

    #[test]
    fn configuration_is_read_only_and_state_hidden_however_it_is_named() {
        let (_ws, _root, guard, dir) = setup();
        let fd = dir.as_raw_fd();
        assert_eq!(guard.check_at(fd, "kaizen.toml", false, true), Ok(()));
        for path in [
            "kaizen.toml",
            ".kaizen/plugins/x/plugin.toml",
            "src/../kaizen.toml",
            "./.kaizen",
        ] {
            assert_eq!(
                guard.check_at(fd, path, true, true),
                Err(Refusal::ReadOnly),
                "{path}"
            );
        }
        assert_eq!(
            guard.check_at(fd, "home/.local/share/kaizen/data/me/log.jsonl", true, true),
            Ok(()),
            "its own data directory is reachable"
        );
        for path in [
            "home/.local/share/kaizen/config.toml",
            "home/.local/share/kaizen",
            "home/.local/share/kaizen/data/other/log.jsonl",
        ] {
            assert_eq!(
                guard.check_at(fd, path, false, true),
                Err(Refusal::Hidden),
                "{path}"
            );
        }
        assert_eq!(guard.check_at(fd, "src/main.rs", true, true), Ok(()));
        assert_eq!(guard.check_at(fd, "kaizen.toml.bak", true, true), Ok(()));
        // The target of a configuration link is configuration too.
        assert_eq!(
            guard.check_at(fd, "conf/settings.json", true, true),
            Err(Refusal::ReadOnly)
        );
        assert_eq!(
            guard.check_at(fd, "conf/settings.json", false, true),
            Ok(())
        );
    }

    #[test]
    fn links_are_judged_where_they_lead() {
        let (_ws, root, guard, dir) = setup();
        let fd = dir.as_raw_fd();
        std::os::unix::fs::symlink(root.join(".kaizen"), root.join("innocent")).unwrap();
        std::os::unix::fs::symlink("kaizen.toml", root.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.join("home"), root.join("h")).unwrap();
        assert_eq!(
            guard.check_at(fd, "innocent/plugins/evil.toml", true, true),
            Err(Refusal::ReadOnly)
        );
        assert_eq!(
            guard.check_at(fd, "dangling", true, true),
            Err(Refusal::ReadOnly),
            "creating through a dangling link"
        );
        // Removing the link itself is fine: it is not the configuration.
        assert_eq!(guard.check_at(fd, "dangling", true, false), Ok(()));
        assert_eq!(
            guard.check_at(fd, "h/.local/share/kaizen/cache", false, true),
            Err(Refusal::Hidden)
        );
    }
}
