//! The filesystem a sandboxed process sees: a root of its own, built from
//! the grant, the way bubblewrap builds one for Codex.
//!
//! Instead of hiding the host's paths one by one, each process gets a new
//! root (a small tmpfs) holding only: the system directories, read-only;
//! a few device nodes; its own `/proc`; a private, size-bounded `/tmp` and
//! `/dev/shm`; and the granted directories at their own absolute paths.
//! Whatever is not there does not exist for the process: named unix
//! sockets of the host (tmux, ssh-agent, X11, databases, docker) in `/tmp`,
//! `/run` or `$HOME` cannot be connected to, whatever the kernel's Landlock
//! version. Inside granted directories, the paths the policy protects are
//! bound read-only over themselves, and the ones it hides are covered.
//!
//! Everything is decided here, in the parent, as [`RootStep`]s with their
//! paths ready; the child ([`crate::child`]) only carries them out, since
//! it may not allocate.

use std::collections::BTreeSet;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Where the host's root is reachable while the new one is built (removed
/// before the program runs).
pub(crate) const OLD_ROOT: &std::ffi::CStr = c"/.oldroot";

/// The host directory the new root's tmpfs is first mounted on, to pivot
/// into; any directory of the host works, and `/tmp` always exists.
pub(crate) const STAGE: &std::ffi::CStr = c"/tmp";

/// The same, with [`OLD_ROOT`] inside it, for `pivot_root`.
pub(crate) const STAGE_OLD_ROOT: &std::ffi::CStr = c"/tmp/.oldroot";

/// System directories bound read-only (or recreated as the same symbolic
/// link), when the host has them.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Device nodes bound from the host.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// One thing to do to the new root, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootStep {
    /// Make a directory (one that exists is fine).
    Dir(CString),
    /// Make a symbolic link `link` pointing at `target`.
    Symlink { target: CString, link: CString },
    /// Make an empty file to bind a file over.
    File(CString),
    /// Bind `from` (a path of the host, under [`OLD_ROOT`]) on `to`,
    /// recursively, without set-uid or devices, read-only when asked.
    Bind {
        from: CString,
        to: CString,
        read_only: bool,
        devices: bool,
    },
    /// Mount a tmpfs with `data` (its mode and size) on `to`.
    Tmpfs {
        to: CString,
        data: CString,
        read_only: bool,
    },
    /// Mount a fresh `/proc` on `to`.
    Proc(CString),
}

/// What the root is built from.
#[derive(Debug, Clone, Default)]
pub(crate) struct RootSpec {
    /// Directories bound read-only (besides the system ones).
    pub readable: Vec<PathBuf>,
    /// Directories bound read-write.
    pub writable: Vec<PathBuf>,
    /// Existing paths inside those that are bound read-only over themselves.
    pub protected: Vec<PathBuf>,
    /// Existing paths inside those that are covered: an empty directory or
    /// an empty file in their place.
    pub hidden: Vec<PathBuf>,
    /// Programs covered by `/dev/null` wherever they are (the system
    /// directories too), so they cannot run.
    pub no_exec: Vec<PathBuf>,
    /// Whether the process may use the network (it then needs the name
    /// service configuration wherever `/etc/resolv.conf` points).
    pub network: bool,
    /// Size of the private `/tmp` and of `/dev/shm`, in MiB.
    pub tmp_mib: u64,
    /// Where a process starts when its working directory is not in its
    /// root (a directory outside the grant).
    pub fallback_cwd: PathBuf,
    /// The session's private home (`$HOME`), bound at the home the
    /// password database names, for programs that look their home up
    /// there instead of in `$HOME` (or run with an emptied environment):
    /// they find a private, writable one, never the user's.
    pub home: Option<(PathBuf, PathBuf)>,
}

impl RootSpec {
    /// Every host path the root is built from: the granted directories,
    /// the protected, hidden and denied paths, and the private home.
    pub(crate) fn watched(&self) -> Vec<PathBuf> {
        self.readable
            .iter()
            .chain(&self.writable)
            .chain(&self.protected)
            .chain(&self.hidden)
            .chain(&self.no_exec)
            .chain(self.home.iter().map(|(private, _)| private))
            .cloned()
            .collect()
    }
}

/// The steps that build a root from `spec`, in order.
pub(crate) fn plan(spec: &RootSpec) -> Vec<RootStep> {
    let mut root = Builder::default();
    for dir in SYSTEM_DIRS.iter().map(Path::new) {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    root.symlink(&target, dir);
                }
            }
            Ok(meta) if meta.is_dir() => root.bind(dir, true, false),
            _ => {}
        }
    }
    if spec.network {
        root.resolver_config();
    }

    root.dir(Path::new("/dev"));
    for name in DEVICES {
        let dev = Path::new("/dev").join(name);
        if dev.exists() {
            root.file(&dev);
            root.push_bind(&dev, &dev, false, true);
        }
    }
    for (link, target) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ] {
        root.symlink(Path::new(target), Path::new(link));
    }
    let tmp_data = format!("mode=1777,size={}m", spec.tmp_mib.max(1));
    root.tmpfs(Path::new("/dev/shm"), &tmp_data, false);
    root.dir(Path::new("/proc"));
    root.steps.push(RootStep::Proc(c_path(Path::new("/proc"))));
    root.tmpfs(Path::new("/tmp"), &tmp_data, false);
    if let Some((private, home)) = spec.home.as_ref().filter(|(_, home)| own_home(spec, home)) {
        root.dir(home);
        root.push_bind(private, home, false, false);
    }

    // Outer directories first, so a directory granted inside another one
    // is bound over it, not under it.
    let mut grants: Vec<(&PathBuf, bool)> = spec
        .readable
        .iter()
        .map(|dir| (dir, true))
        .chain(spec.writable.iter().map(|dir| (dir, false)))
        .collect();
    grants.sort_by_key(|(dir, _)| dir.components().count());
    for (dir, read_only) in grants {
        root.bind(dir, read_only, false);
    }
    // Only what lies in a bound tree is there to protect or hide.
    let bound = |path: &&PathBuf| {
        spec.readable
            .iter()
            .chain(&spec.writable)
            .any(|dir| path.starts_with(dir) && *path != dir)
    };
    let mut inner: Vec<(&PathBuf, bool)> = spec
        .protected
        .iter()
        .filter(bound)
        .map(|path| (path, true))
        .chain(spec.hidden.iter().filter(bound).map(|path| (path, false)))
        .collect();
    inner.sort_by_key(|(path, _)| path.components().count());
    // A path inside a hidden directory is covered with it; there is no
    // making a mount point for it in the empty, read-only cover (Kaizen's
    // compile cache inside a `KAIZEN_HOME` kept in the workspace).
    let mut covered: Vec<&PathBuf> = Vec::new();
    for (path, protect) in inner {
        if covered.iter().any(|dir| path.starts_with(dir)) {
            continue;
        }
        let is_dir = path.is_dir();
        if !protect && is_dir {
            covered.push(path);
        }
        match (protect, is_dir) {
            (true, _) => root.push_bind(path, path, true, false),
            (false, true) => root.tmpfs(path, "mode=0000,size=4k", true),
            (false, false) => root.push_bind(Path::new("/dev/null"), path, true, false),
        }
    }
    // Last, over whatever tree holds them.
    for program in spec.no_exec.iter().filter(|path| path.is_file()) {
        root.push_bind(Path::new("/dev/null"), program, true, false);
    }
    root.steps
}

/// Builds the steps, remembering the directories already made.
#[derive(Default)]
struct Builder {
    steps: Vec<RootStep>,
    made: BTreeSet<PathBuf>,
}

impl Builder {
    /// Makes `dir` and every ancestor not made yet. Directories that come
    /// with a bind (inside a granted tree) already exist; making them again
    /// is harmless.
    fn dir(&mut self, dir: &Path) {
        let mut path = PathBuf::from("/");
        for part in dir.components() {
            if let Component::Normal(name) = part {
                path.push(name);
                if self.made.insert(path.clone()) {
                    self.steps.push(RootStep::Dir(c_path(&path)));
                }
            }
        }
    }

    fn file(&mut self, file: &Path) {
        if let Some(parent) = file.parent() {
            self.dir(parent);
        }
        self.steps.push(RootStep::File(c_path(file)));
    }

    fn symlink(&mut self, target: &Path, link: &Path) {
        if let Some(parent) = link.parent() {
            self.dir(parent);
        }
        self.steps.push(RootStep::Symlink {
            target: c_path(target),
            link: c_path(link),
        });
    }

    /// Binds the host directory `dir` at the same path.
    fn bind(&mut self, dir: &Path, read_only: bool, devices: bool) {
        self.dir(dir);
        self.push_bind(dir, dir, read_only, devices);
    }

    fn push_bind(&mut self, from: &Path, to: &Path, read_only: bool, devices: bool) {
        let mut old = PathBuf::from(OsStr::from_bytes(OLD_ROOT.to_bytes()));
        old.push(from.strip_prefix("/").unwrap_or(from));
        self.steps.push(RootStep::Bind {
            from: c_path(&old),
            to: c_path(to),
            read_only,
            devices,
        });
    }

    fn tmpfs(&mut self, dir: &Path, data: &str, read_only: bool) {
        self.dir(dir);
        self.steps.push(RootStep::Tmpfs {
            to: c_path(dir),
            data: CString::new(data).expect("no NUL in tmpfs options"),
            read_only,
        });
    }

    /// `/etc/resolv.conf` may be a link out of `/etc` (to systemd-resolved's
    /// file under `/run`): the file it resolves to is bound at its own
    /// path, so that name lookups work for a process granted the network.
    fn resolver_config(&mut self) {
        let conf = Path::new("/etc/resolv.conf");
        let is_link = std::fs::symlink_metadata(conf).is_ok_and(|m| m.file_type().is_symlink());
        let Ok(target) = std::fs::canonicalize(conf) else {
            return;
        };
        if is_link && !target.starts_with("/etc") && !target.starts_with("/usr") {
            self.file(&target);
            self.push_bind(&target, &target, true, false);
        }
    }
}

/// Whether `home` may be given the private home: an absolute path that is
/// not `/`, not a system directory or in one, and not granted (nor inside
/// a grant) as it is.
fn own_home(spec: &RootSpec, home: &Path) -> bool {
    home.is_absolute()
        && home.parent().is_some()
        && !SYSTEM_DIRS.iter().any(|dir| home.starts_with(dir))
        && !home.starts_with("/tmp")
        && !spec
            .readable
            .iter()
            .chain(&spec.writable)
            .any(|dir| home.starts_with(dir))
}

/// `path` as a C string; paths with a NUL byte cannot reach the kernel,
/// and the sandbox only receives paths that came from the filesystem.
fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_else(|_| c"/nonexistent".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str) -> CString {
        CString::new(path).unwrap()
    }

    #[test]
    fn grants_are_bound_outer_first_then_protected_and_hidden_paths() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::write(root.join("kaizen.toml"), "").unwrap();
        std::fs::create_dir(root.join("home")).unwrap();
        let spec = RootSpec {
            readable: vec![root.join("ref")],
            writable: vec![root.clone()],
            protected: vec![root.join("kaizen.toml")],
            hidden: vec![root.join("home")],
            no_exec: Vec::new(),
            network: false,
            tmp_mib: 64,
            fallback_cwd: root.clone(),
            home: Some((root.join("private"), PathBuf::from("/home/someone"))),
        };
        let steps = plan(&spec);
        let index = |wanted: &RootStep| {
            steps
                .iter()
                .position(|s| s == wanted)
                .unwrap_or_else(|| panic!("{wanted:?} missing from {steps:#?}"))
        };
        let old = |p: &Path| c(&format!("{}{}", OLD_ROOT.to_str().unwrap(), p.display()));
        let ws_bind = index(&RootStep::Bind {
            from: old(&root),
            to: c_path(&root),
            read_only: false,
            devices: false,
        });
        let ref_bind = index(&RootStep::Bind {
            from: old(&root.join("ref")),
            to: c_path(&root.join("ref")),
            read_only: true,
            devices: false,
        });
        let protect = index(&RootStep::Bind {
            from: old(&root.join("kaizen.toml")),
            to: c_path(&root.join("kaizen.toml")),
            read_only: true,
            devices: false,
        });
        let hide = index(&RootStep::Tmpfs {
            to: c_path(&root.join("home")),
            data: c("mode=0000,size=4k"),
            read_only: true,
        });
        let tmp = index(&RootStep::Tmpfs {
            to: c("/tmp"),
            data: c("mode=1777,size=64m"),
            read_only: false,
        });
        let home = index(&RootStep::Bind {
            from: old(&root.join("private")),
            to: c("/home/someone"),
            read_only: false,
            devices: false,
        });
        assert!(tmp < home && home < ws_bind);
        assert!(tmp < ws_bind && ws_bind < ref_bind && ref_bind < protect && protect < hide);
        assert!(steps.contains(&RootStep::Proc(c("/proc"))));
        assert!(index(&RootStep::Dir(c("/dev"))) < index(&RootStep::File(c("/dev/null"))));
        // Each directory is made once.
        let dirs: Vec<_> = steps
            .iter()
            .filter(|s| matches!(s, RootStep::Dir(_)))
            .collect();
        let unique: BTreeSet<_> = dirs.iter().map(|s| format!("{s:?}")).collect();
        assert_eq!(dirs.len(), unique.len());
    }

    #[test]
    fn what_lies_in_a_hidden_directory_is_covered_with_it() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(home.join("cache/components")).unwrap();
        std::fs::write(home.join("cache/components.key"), "").unwrap();
        std::fs::write(home.join("config.toml"), "").unwrap();
        let spec = RootSpec {
            readable: Vec::new(),
            writable: vec![root.clone()],
            protected: vec![home.join("config.toml")],
            hidden: vec![
                home.join("cache/components"),
                home.clone(),
                home.join("cache/components.key"),
            ],
            no_exec: Vec::new(),
            network: false,
            tmp_mib: 64,
            fallback_cwd: root.clone(),
            home: None,
        };
        let steps = plan(&spec);
        let inside_home = |to: &CString| {
            to.to_bytes().starts_with(c_path(&home).to_bytes()) && *to != c_path(&home)
        };
        let mut touched = steps.iter().filter(|step| match step {
            RootStep::Bind { to, .. } | RootStep::Tmpfs { to, .. } => inside_home(to),
            RootStep::Dir(to) | RootStep::File(to) => inside_home(to),
            _ => false,
        });
        assert!(touched.next().is_none(), "{steps:#?}");
        assert!(steps.contains(&RootStep::Tmpfs {
            to: c_path(&home),
            data: c("mode=0000,size=4k"),
            read_only: true,
        }));
    }
}
