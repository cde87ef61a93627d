//! The one read of a workspace's configuration.
//!
//! Everything in a workspace that can change what runs or what is allowed
//! (`kaizen.toml`, `.kaizen/`, Claude Code's settings, hooks, agents,
//! skills and commands, `.mcp.json`, the other agents' `.gemini/` and
//! `.codex/`, and the plugin directories a `kaizen.toml` names inside the
//! workspace) is read once, here, into a [`ConfigSnapshot`]. Trust is
//! decided on those bytes, and the loaders parse the snapshot, never the
//! disk again: what was trusted is exactly what takes effect, however the
//! files change in between.
//!
//! Reading goes through a handle on the workspace ([`cap_std::fs::Dir`]):
//! a symbolic link is followed, and its target's content is what is
//! hashed and loaded, only while it stays inside the workspace; a link
//! that leads out of it (or nowhere), a special file or an unreadable one
//! is recorded as refused, which is part of the digest too.

use anyhow::{Context as _, bail};
use cap_std::fs::Dir;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Files at a workspace's root that configure Kaizen, Claude Code or the
/// MCP servers it starts.
pub const CONFIG_FILES: &[&str] = &[
    "kaizen.toml",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// Directories at a workspace's root whose whole content configures
/// Kaizen (plugins: manifests and code), Claude Code (the scripts its
/// hooks conventionally run, its agents, skills and commands), or the
/// other agents Kaizen can run as runtimes (Gemini CLI's settings and
/// extensions, Codex's config): those are told to trust the workspace
/// only when Kaizen does.
pub const CONFIG_DIRS: &[&str] = &[
    ".kaizen",
    ".claude/hooks",
    ".claude/agents",
    ".claude/skills",
    ".claude/commands",
    ".gemini",
    ".codex",
];

/// Most files read; a workspace with more is refused trust rather than
/// read for minutes.
const MAX_FILES: usize = 10_000;

/// Most bytes read in all.
const MAX_BYTES: u64 = 512 << 20;

/// One entry of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snapped {
    /// A file's content (a link's target's, for a link inside the
    /// workspace).
    Bytes(Vec<u8>),
    /// Not read, and why (a link out of the workspace, a special file).
    Refused(String),
}

/// A workspace's configuration as read once.
#[derive(Debug, Clone)]
pub struct ConfigSnapshot {
    /// The workspace (canonical).
    pub root: PathBuf,
    /// Each entry by its path relative to the root (`/`-separated).
    files: BTreeMap<String, Snapped>,
    /// Where configuration really is when a link led elsewhere in the
    /// workspace: those targets are configuration too.
    link_targets: Vec<PathBuf>,
}

impl ConfigSnapshot {
    /// Reads the configuration of `root` (canonical).
    pub fn read(root: &Path) -> anyhow::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())
            .with_context(|| format!("opening the workspace {}", root.display()))?;
        let mut reader = Reader {
            root,
            dir: &dir,
            snapshot: Self {
                root: root.to_path_buf(),
                files: BTreeMap::new(),
                link_targets: Vec::new(),
            },
            bytes: 0,
        };
        for name in CONFIG_FILES.iter().chain(CONFIG_DIRS) {
            reader.entry(name)?;
        }
        for extra in plugin_dirs_named(reader.snapshot.file("kaizen.toml")) {
            reader.entry(&extra)?;
        }
        Ok(reader.snapshot)
    }

    /// The content of `rel` (`kaizen.toml`, `.claude/settings.json`), if
    /// it was read.
    pub fn file(&self, rel: &str) -> Option<&[u8]> {
        match self.files.get(rel) {
            Some(Snapped::Bytes(bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// What was refused, and why.
    pub fn refused(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().filter_map(|(path, entry)| match entry {
            Snapped::Refused(why) => Some((path.as_str(), why.as_str())),
            Snapped::Bytes(_) => None,
        })
    }

    /// True when the workspace configures nothing: there is nothing to
    /// trust.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Whether anything under `prefix` (a directory, relative) was read.
    pub fn has_dir(&self, prefix: &str) -> bool {
        self.under(prefix).next().is_some()
    }

    /// The files read under `prefix` (a directory of the workspace), by
    /// their paths below it.
    pub fn files_under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a [u8])> {
        self.under(prefix)
    }

    /// One digest of every entry's path and content.
    pub fn digest(&self) -> String {
        let mut hasher = blake3::Hasher::new();
        for (path, entry) in &self.files {
            let hash = match entry {
                Snapped::Bytes(bytes) => blake3::hash(bytes).to_hex().to_string(),
                Snapped::Refused(why) => format!("refused:{why}"),
            };
            hasher.update(path.as_bytes());
            hasher.update(b"\0");
            hasher.update(hash.as_bytes());
            hasher.update(b"\n");
        }
        hasher.finalize().to_hex().to_string()
    }

    /// The entries, one per line, for messages.
    pub fn listing(&self) -> String {
        self.files
            .iter()
            .map(|(path, entry)| match entry {
                Snapped::Bytes(_) => format!("  {path}"),
                Snapped::Refused(why) => format!("  {path} (not read: {why})"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Where linked configuration really is, inside the workspace: it must
    /// be as read-only to tools and programs as the names that lead to it.
    pub fn link_targets(&self) -> &[PathBuf] {
        &self.link_targets
    }

    /// Writes every file read under `prefix` (relative) into `into`, at
    /// the same relative paths below `prefix`, readable by the user only:
    /// the copy a loader reads instead of the workspace.
    pub fn materialize(&self, prefix: &str, into: &Path) -> anyhow::Result<()> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(into)
            .with_context(|| format!("creating {}", into.display()))?;
        for (rel, bytes) in self.under(prefix) {
            let target = into.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&target)
                .and_then(|mut file| file.write_all(bytes))
                .with_context(|| format!("writing {}", target.display()))?;
        }
        Ok(())
    }

    /// The files read under `prefix`, by their paths below it.
    fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a [u8])> {
        self.files.iter().filter_map(move |(path, entry)| {
            let rel = path.strip_prefix(prefix)?.strip_prefix('/')?;
            match entry {
                Snapped::Bytes(bytes) => Some((rel, bytes.as_slice())),
                Snapped::Refused(_) => None,
            }
        })
    }
}

/// Reads entries through the workspace's handle.
struct Reader<'a> {
    root: &'a Path,
    dir: &'a Dir,
    snapshot: ConfigSnapshot,
    bytes: u64,
}

impl Reader<'_> {
    /// Adds `rel` (a file, a link, or a directory read whole), if it is
    /// there.
    fn entry(&mut self, rel: &str) -> anyhow::Result<()> {
        let own = match self.dir.symlink_metadata(rel) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) if is_escape(&err) => {
                return self.refuse(rel, "a link on its way leads out of the workspace");
            }
            Err(err) => return self.refuse(rel, &format!("cannot be read: {err}")),
        };
        let meta = if own.is_symlink() {
            match self.dir.metadata(rel) {
                Ok(meta) => meta,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    return self.refuse(rel, "a link that leads nowhere");
                }
                Err(_) => return self.refuse(rel, "a link that leads out of the workspace"),
            }
        } else {
            own
        };
        self.note_target(rel);
        if meta.is_dir() {
            let entries = match self.dir.read_dir(rel) {
                Ok(entries) => entries,
                Err(err) => return self.refuse(rel, &format!("cannot be read: {err}")),
            };
            let mut names = Vec::new();
            for entry in entries {
                let entry = entry.with_context(|| format!("reading {rel}"))?;
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
            names.sort();
            for name in names {
                self.entry(&format!("{rel}/{name}"))?;
            }
            return Ok(());
        }
        if !meta.is_file() {
            return self.refuse(rel, "not a regular file");
        }
        self.count(rel, meta.len())?;
        match self.dir.read(rel) {
            Ok(bytes) => {
                self.snapshot
                    .files
                    .insert(rel.to_string(), Snapped::Bytes(bytes));
                Ok(())
            }
            Err(err) if is_escape(&err) => {
                self.refuse(rel, "a link that leads out of the workspace")
            }
            Err(err) => self.refuse(rel, &format!("cannot be read: {err}")),
        }
    }

    fn refuse(&mut self, rel: &str, why: &str) -> anyhow::Result<()> {
        self.count(rel, 0)?;
        self.snapshot
            .files
            .insert(rel.to_string(), Snapped::Refused(why.to_string()));
        Ok(())
    }

    /// Counts one more entry of `len` bytes against the bounds.
    fn count(&mut self, rel: &str, len: u64) -> anyhow::Result<()> {
        self.bytes += len;
        if self.snapshot.files.len() >= MAX_FILES || self.bytes > MAX_BYTES {
            bail!(
                "the workspace's configuration ({rel} and the rest) holds more than {MAX_FILES} files or {} MiB; it cannot be checked for trust",
                MAX_BYTES >> 20
            );
        }
        Ok(())
    }

    /// Remembers where configuration really is when a link on the way to
    /// `rel` (the first one: what it leads to holds the rest) led
    /// elsewhere in the workspace (the handle would not have followed one
    /// out of it).
    fn note_target(&mut self, rel: &str) {
        let mut lexical = self.root.to_path_buf();
        for part in rel.split('/') {
            lexical.push(part);
            let is_link = std::fs::symlink_metadata(&lexical).is_ok_and(|m| m.is_symlink());
            if !is_link {
                continue;
            }
            if let Ok(real) = lexical.canonicalize()
                && real.starts_with(self.root)
                && !self
                    .snapshot
                    .link_targets
                    .iter()
                    .any(|known| real.starts_with(known))
            {
                self.snapshot.link_targets.push(real);
            }
            return;
        }
    }
}

/// Whether `err` is cap-std's refusal of a path that leads out of the
/// directory.
fn is_escape(err: &std::io::Error) -> bool {
    err.kind() == std::io::ErrorKind::PermissionDenied
        || err.to_string().contains("outside of the filesystem")
}

/// The plugin directories `kaizen.toml` names inside the workspace
/// (relative, without `..`): they hold code that runs, so they are part of
/// what is trusted. A file that does not parse names none (its loader
/// reports it).
fn plugin_dirs_named(kaizen_toml: Option<&[u8]>) -> Vec<String> {
    #[derive(serde::Deserialize, Default)]
    struct Plugins {
        #[serde(default)]
        dirs: Vec<PathBuf>,
    }
    #[derive(serde::Deserialize, Default)]
    struct File {
        #[serde(default)]
        plugins: Plugins,
    }
    let Some(text) = kaizen_toml.and_then(|bytes| std::str::from_utf8(bytes).ok()) else {
        return Vec::new();
    };
    let file: File = toml::from_str(text).unwrap_or_default();
    file.plugins
        .dirs
        .iter()
        .filter_map(|dir| {
            let mut parts = Vec::new();
            for part in dir.components() {
                match part {
                    Component::CurDir => {}
                    Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
                    _ => return None,
                }
            }
            Some(parts.join("/"))
        })
        .filter(|dir| !dir.is_empty() && dir != ".kaizen" && !dir.starts_with(".kaizen/"))
        .collect()
}

/// A private directory under `home` for copies of a workspace's
/// configuration, removed when dropped; copies left by a run that was
/// killed are removed after a day.
pub fn copies_dir(home: &Path) -> anyhow::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let parent = home.join("snapshots");
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    if let Ok(entries) = std::fs::read_dir(&parent) {
        let day = std::time::Duration::from_secs(24 * 3600);
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .ok()
                .and_then(|at| at.elapsed().ok())
                .is_some_and(|age| age > day);
            if old {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    tempfile::Builder::new()
        .prefix("workspace-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&parent)
        .with_context(|| format!("creating a directory in {}", parent.display()))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
