//! The paths no plugin may touch through `wasi:filesystem`, even inside a
//! directory it may write: the configuration that decides what plugins
//! may do (`kaizen.toml`, `.kaizen/`, ... at the top of a writable
//! directory), read-only; and the host's own state (`KAIZEN_HOME`, the
//! compile cache), not there at all.
//!
//! A preopen grants a whole directory tree, so the guard sits in front of
//! wasmtime-wasi's filesystem (see [`crate::guarded_fs`]) and checks every
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
}

/// Why an operation on a path is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The path is configuration: it may be read, not changed.
    ReadOnly,
    /// The path is the host's own: it is not there.
    Hidden,
}

/// The guard of one plugin: its writable directories and what is protected
/// in them.
#[derive(Debug, Clone, Default)]
pub(crate) struct FsGuard {
    /// Canonical configuration paths, one per writable root and name.
    read_only: Vec<PathBuf>,
    /// Canonical hidden paths.
    hidden: Vec<PathBuf>,
}

impl FsGuard {
    /// The guard for a plugin writing `writable` (its read-write preopens).
    pub fn new(writable: &[PathBuf], paths: &ProtectedPaths) -> Self {
        let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let read_only = writable
            .iter()
            .map(|dir| canonical(dir))
            .flat_map(|dir| paths.read_only_names.iter().map(move |name| dir.join(name)))
            .collect();
        let hidden = paths.hidden.iter().map(|path| canonical(path)).collect();
        Self { read_only, hidden }
    }

    /// True when the guard has nothing to check.
    pub fn is_empty(&self) -> bool {
        self.read_only.is_empty() && self.hidden.is_empty()
    }

    /// Whether `path` (absolute, real) may be read and, when `change`,
    /// changed.
    pub fn check_path(&self, path: &Path, change: bool) -> Result<(), Refusal> {
        if self.hidden.iter().any(|hidden| path.starts_with(hidden)) {
            return Err(Refusal::Hidden);
        }
        if change && self.read_only.iter().any(|config| path.starts_with(config)) {
            return Err(Refusal::ReadOnly);
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
            &ProtectedPaths {
                read_only_names: vec!["kaizen.toml".into(), ".kaizen".into()],
                hidden: vec![root.join("home/.local/share/kaizen")],
            },
        );
        let dir = std::fs::File::open(&root).unwrap();
        (ws, root, guard, dir)
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
        for path in [
            "home/.local/share/kaizen/config.toml",
            "home/.local/share/kaizen",
        ] {
            assert_eq!(
                guard.check_at(fd, path, false, true),
                Err(Refusal::Hidden),
                "{path}"
            );
        }
        assert_eq!(guard.check_at(fd, "src/main.rs", true, true), Ok(()));
        assert_eq!(guard.check_at(fd, "kaizen.toml.bak", true, true), Ok(()));
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
