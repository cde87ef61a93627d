//! Workspace trust: whether the configuration a workspace carries may take
//! effect.
//!
//! A workspace is usually someone else's repository, so what it says about
//! Kaizen (`kaizen.toml`, plugins under `.kaizen/`, and the `.claude/`
//! settings and `.mcp.json` that later versions read) is untrusted until
//! the user trusts it: on a terminal when asked, or with `kaizen trust`.
//! Trust is recorded in `$KAIZEN_HOME` against a digest of those files, so
//! any change to them, by anyone, asks again. Until then the workspace's
//! config may only lower limits; see `config.rs` for exactly what applies.

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The trust store, under `KAIZEN_HOME`.
pub const TRUST_STORE: &str = "trusted-workspaces.json";

/// Files at a workspace's root that configure Kaizen (or will: Claude
/// Code's settings and MCP servers are read by later versions).
const CONFIG_FILES: &[&str] = &[
    "kaizen.toml",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// Directories at a workspace's root whose whole content configures
/// Kaizen (plugins: manifests and code; the scripts Claude Code's hooks
/// conventionally run), or the other agents Kaizen can run as runtimes
/// (Gemini CLI's settings and extensions, Codex's config): those are told
/// to trust the workspace only when Kaizen does.
const CONFIG_DIRS: &[&str] = &[".kaizen", ".claude/hooks", ".gemini", ".codex"];

/// What no tool may change at the top of a directory it may write: the
/// configuration files and directories Kaizen (or Claude Code) reads.
pub const PROTECTED_NAMES: &[&str] = &[
    "kaizen.toml",
    ".kaizen",
    ".claude",
    ".mcp.json",
    ".gemini",
    ".codex",
];

/// Most files read under a config directory; a workspace with more is
/// refused trust rather than hashed for minutes.
const MAX_FILES: usize = 10_000;

/// What configures Kaizen in one workspace, as found now.
#[derive(Debug, Clone)]
pub struct WorkspaceConfig {
    /// The workspace (canonical).
    pub root: PathBuf,
    /// Each config file, relative to the root, with the BLAKE3 of its
    /// content (of the link text for a symbolic link), sorted by path.
    pub files: Vec<(String, String)>,
}

impl WorkspaceConfig {
    /// Reads the config files of `root` (canonical).
    pub fn read(root: &Path) -> anyhow::Result<Self> {
        let mut files = Vec::new();
        for name in CONFIG_FILES {
            hash_entry(root, Path::new(name), &mut files)?;
        }
        for name in CONFIG_DIRS {
            hash_entry(root, Path::new(name), &mut files)?;
        }
        files.sort();
        Ok(Self {
            root: root.to_path_buf(),
            files,
        })
    }

    /// True when the workspace configures nothing: there is nothing to
    /// trust.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// One digest of every file's path and content.
    pub fn digest(&self) -> String {
        let mut hasher = blake3::Hasher::new();
        for (path, hash) in &self.files {
            hasher.update(path.as_bytes());
            hasher.update(b"\0");
            hasher.update(hash.as_bytes());
            hasher.update(b"\n");
        }
        hasher.finalize().to_hex().to_string()
    }

    /// The config files, one per line, for messages.
    pub fn listing(&self) -> String {
        self.files
            .iter()
            .map(|(path, _)| format!("  {}", path))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Adds `rel` (a file, a link, or a directory walked whole) under `root`.
fn hash_entry(root: &Path, rel: &Path, files: &mut Vec<(String, String)>) -> anyhow::Result<()> {
    let path = root.join(rel);
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let name = rel.to_string_lossy().into_owned();
    if meta.file_type().is_symlink() {
        let target = fs::read_link(&path).with_context(|| format!("reading {}", path.display()))?;
        let text = format!("symlink:{}", target.display());
        files.push((name, blake3::hash(text.as_bytes()).to_hex().to_string()));
    } else if meta.is_dir() {
        let entries = fs::read_dir(&path).with_context(|| format!("reading {}", path.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading {}", path.display()))?;
            hash_entry(root, &rel.join(entry.file_name()), files)?;
            if files.len() > MAX_FILES {
                anyhow::bail!(
                    "{} holds more than {MAX_FILES} files; Kaizen's config there cannot be \
                     checked for trust",
                    path.display()
                );
            }
        }
    } else {
        let bytes = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        files.push((name, blake3::hash(&bytes).to_hex().to_string()));
    }
    Ok(())
}

/// Asks the user whether to trust a workspace's config (it is `NotTrusted`
/// or `Changed`); true trusts it.
pub type AskTrust<'a> = &'a (dyn Fn(&WorkspaceConfig, TrustStatus) -> bool + Sync);

/// Whether a workspace's config may take effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustStatus {
    /// The workspace configures nothing.
    NothingToTrust,
    /// Trusted, and unchanged since.
    Trusted,
    /// Never trusted.
    NotTrusted,
    /// Trusted once, but its config has changed since.
    Changed,
}

/// One trusted workspace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrustedWorkspace {
    /// The workspace (canonical).
    pub path: PathBuf,
    /// [`WorkspaceConfig::digest`] when it was trusted.
    pub digest: String,
    /// When (RFC 3339).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    workspaces: Vec<TrustedWorkspace>,
}

/// The trusted workspaces, kept in `$KAIZEN_HOME/trusted-workspaces.json`.
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store under `kaizen_home`.
    pub fn new(kaizen_home: &Path) -> Self {
        Self {
            path: kaizen_home.join(TRUST_STORE),
        }
    }

    /// Every trusted workspace.
    pub fn list(&self) -> anyhow::Result<Vec<TrustedWorkspace>> {
        Ok(self.load()?.workspaces)
    }

    /// Whether `config` may take effect.
    pub fn status(&self, config: &WorkspaceConfig) -> anyhow::Result<TrustStatus> {
        if config.is_empty() {
            return Ok(TrustStatus::NothingToTrust);
        }
        let store = self.load()?;
        Ok(
            match store.workspaces.iter().find(|w| w.path == config.root) {
                Some(entry) if entry.digest == config.digest() => TrustStatus::Trusted,
                Some(_) => TrustStatus::Changed,
                None => TrustStatus::NotTrusted,
            },
        )
    }

    /// Trusts `config` as it is now.
    pub fn trust(&self, config: &WorkspaceConfig) -> anyhow::Result<()> {
        let mut store = self.load()?;
        store.workspaces.retain(|w| w.path != config.root);
        store.workspaces.push(TrustedWorkspace {
            path: config.root.clone(),
            digest: config.digest(),
            trusted_at: kaizen_runtime::session_store::now(),
        });
        self.save(&store)
    }

    /// Forgets `root`; false when it was not trusted.
    pub fn revoke(&self, root: &Path) -> anyhow::Result<bool> {
        let mut store = self.load()?;
        let before = store.workspaces.len();
        store.workspaces.retain(|w| w.path != root);
        if store.workspaces.len() == before {
            return Ok(false);
        }
        self.save(&store)?;
        Ok(true)
    }

    fn load(&self) -> anyhow::Result<StoreFile> {
        match fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{} is damaged; remove it (every workspace will be untrusted) or repair it",
                    self.path.display()
                )
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(StoreFile::default()),
            Err(err) => Err(err).with_context(|| format!("reading {}", self.path.display())),
        }
    }

    /// Writes atomically (temp file, fsync, rename), readable by the user
    /// only.
    fn save(&self, store: &StoreFile) -> anyhow::Result<()> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let dir = self
            .path
            .parent()
            .context("the trust store has no directory")?;
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let tmp = dir.join(format!(".{TRUST_STORE}.{}", std::process::id()));
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .with_context(|| format!("creating {}", tmp.display()))?;
        file.write_all(&serde_json::to_vec_pretty(store)?)?;
        file.sync_all()?;
        fs::rename(&tmp, &self.path).with_context(|| format!("writing {}", self.path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn nothing_configured_is_nothing_to_trust() {
        let ws = workspace();
        fs::write(ws.path().join("README.md"), "hi").unwrap();
        let config = WorkspaceConfig::read(ws.path()).unwrap();
        assert!(config.is_empty());
        let home = workspace();
        let store = TrustStore::new(home.path());
        assert_eq!(store.status(&config).unwrap(), TrustStatus::NothingToTrust);
    }

    #[test]
    fn trust_holds_until_any_config_file_changes() {
        let ws = workspace();
        let root = ws.path().canonicalize().unwrap();
        fs::write(root.join("kaizen.toml"), "[plugins]\n").unwrap();
        fs::create_dir_all(root.join(".kaizen/plugins/x")).unwrap();
        fs::write(root.join(".kaizen/plugins/x/plugin.toml"), "a").unwrap();
        fs::write(root.join(".kaizen/plugins/x/x.wasm"), "code").unwrap();
        let home = workspace();
        let store = TrustStore::new(home.path());
        let config = WorkspaceConfig::read(&root).unwrap();
        assert_eq!(config.files.len(), 3);
        assert_eq!(store.status(&config).unwrap(), TrustStatus::NotTrusted);
        store.trust(&config).unwrap();
        assert_eq!(store.status(&config).unwrap(), TrustStatus::Trusted);

        // A plugin's code, a new file, the config: each asks again.
        for (file, text) in [
            (".kaizen/plugins/x/x.wasm", "evil"),
            (".mcp.json", "{}"),
            ("kaizen.toml", "[grants]\n"),
        ] {
            fs::write(root.join(file), text).unwrap();
            let now = WorkspaceConfig::read(&root).unwrap();
            assert_eq!(store.status(&now).unwrap(), TrustStatus::Changed, "{file}");
            store.trust(&now).unwrap();
        }
        let mode = fs::metadata(home.path().join(TRUST_STORE)).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(mode.permissions().mode() & 0o777, 0o600);
        assert!(store.revoke(&root).unwrap());
        let now = WorkspaceConfig::read(&root).unwrap();
        assert_eq!(store.status(&now).unwrap(), TrustStatus::NotTrusted);
    }

    #[test]
    fn a_symlink_is_hashed_as_its_target_text() {
        let ws = workspace();
        let root = ws.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("kaizen.toml")).unwrap();
        let config = WorkspaceConfig::read(&root).unwrap();
        assert_eq!(config.files.len(), 1);
        std::fs::remove_file(root.join("kaizen.toml")).unwrap();
        std::os::unix::fs::symlink("/etc/hosts", root.join("kaizen.toml")).unwrap();
        assert_ne!(
            WorkspaceConfig::read(&root).unwrap().digest(),
            config.digest()
        );
    }

    #[test]
    fn a_damaged_store_is_an_error_that_says_what_to_do() {
        let home = workspace();
        fs::write(home.path().join(TRUST_STORE), "not json").unwrap();
        let err = TrustStore::new(home.path()).list().unwrap_err();
        assert!(
            format!("{err:#}").contains("is damaged; remove it"),
            "{err:#}"
        );
    }
}
