//! Workspace trust: whether the configuration a workspace carries may take
//! effect.
//!
//! A workspace is usually someone else's repository, so what it says about
//! Kaizen (`kaizen.toml`, plugins under `.kaizen/`, and the `.claude/`
//! settings and `.mcp.json` that later versions read) is untrusted until
//! the user trusts it: on a terminal when asked, or with `kaizen trust`.
//! Trust is recorded in `$KAIZEN_HOME` against the digest of those files
//! as read once ([`ConfigSnapshot`]), so any change to them, by anyone,
//! asks again, and what takes effect is what was trusted. Until then the
//! workspace's config may only lower limits; see `config.rs` for exactly
//! what applies.

pub use crate::snapshot::ConfigSnapshot;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The trust store, under `KAIZEN_HOME`.
pub const TRUST_STORE: &str = "trusted-workspaces.json";

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

/// Asks the user whether to trust a workspace's config (it is `NotTrusted`
/// or `Changed`); true trusts it.
pub type AskTrust<'a> = &'a (dyn Fn(&ConfigSnapshot, TrustStatus) -> bool + Sync);

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
    /// [`ConfigSnapshot::digest`] when it was trusted.
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
    pub fn status(&self, config: &ConfigSnapshot) -> anyhow::Result<TrustStatus> {
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
    pub fn trust(&self, config: &ConfigSnapshot) -> anyhow::Result<()> {
        let mut store = self.load()?;
        store.workspaces.retain(|w| w.path != config.root);
        store.workspaces.push(TrustedWorkspace {
            path: config.root.clone(),
            digest: config.digest(),
            trusted_at: kaizen_session_store::now(),
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
        let config = ConfigSnapshot::read(ws.path()).unwrap();
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
        let config = ConfigSnapshot::read(&root).unwrap();
        assert_eq!(config.listing().lines().count(), 3);
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
            let now = ConfigSnapshot::read(&root).unwrap();
            assert_eq!(store.status(&now).unwrap(), TrustStatus::Changed, "{file}");
            store.trust(&now).unwrap();
        }
        let mode = fs::metadata(home.path().join(TRUST_STORE)).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(mode.permissions().mode() & 0o777, 0o600);
        assert!(store.revoke(&root).unwrap());
        let now = ConfigSnapshot::read(&root).unwrap();
        assert_eq!(store.status(&now).unwrap(), TrustStatus::NotTrusted);
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
