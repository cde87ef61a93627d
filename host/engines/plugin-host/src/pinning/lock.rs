//! `plugins.lock`: the digests `kaizen plugins add` recorded for the
//! plugins of one plugin directory. While a directory has one, every plugin
//! in it must be listed and match, so a component or manifest changed
//! after it was added is refused instead of run.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The lock file's name, in the plugin directory it covers (beside the
/// plugins' own directories).
pub const LOCK_FILE: &str = "plugins.lock";

const HEADER: &str = "\
# Kaizen's plugin lock, written by `kaizen plugins add` and `kaizen plugins remove`.
# Every plugin in this directory must be listed here with the digests of its
# files; one whose files no longer match is refused. Do not edit by hand:
# to accept a changed plugin, add it again.
";

/// A BLAKE3 digest as the lock writes it: `blake3:<64 hex digits>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest(pub blake3::Hash);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(blake3::hash(bytes))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "blake3:{}", self.0.to_hex())
    }
}

impl std::str::FromStr for Digest {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        text.strip_prefix("blake3:")
            .and_then(|hex| blake3::Hash::from_hex(hex).ok())
            .map(Self)
            .ok_or_else(|| format!("`{text}` is not a digest (blake3:<64 hex digits>)"))
    }
}

impl Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// What was recorded for one plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LockEntry {
    /// The digest of its `plugin.toml`.
    pub manifest: Digest,
    /// The digest of its component.
    pub component: Digest,
    /// The trusted key that had signed the component when it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// Where it was added from, for the user's reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_from: Option<String>,
}

/// A lock file's contents: entries by plugin directory name.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginLock {
    /// The format's version.
    version: u32,
    /// Entries by the name of the plugin's directory.
    #[serde(default)]
    pub plugins: BTreeMap<String, LockEntry>,
}

impl PluginLock {
    const VERSION: u32 = 1;

    /// The lock of the plugin directory `root`: `Ok(None)` when it has
    /// none.
    pub fn load(root: &Path) -> Result<Option<Self>, String> {
        let path = root.join(LOCK_FILE);
        // Ample for thousands of plugins.
        let text = match super::read_bounded(&path, 4 << 20, "a plugin lock") {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
        };
        let lock: Self = toml::from_str(&text).map_err(|err| {
            format!(
                "{} is not a valid plugin lock ({}); restore it from version control, or delete it and add each plugin again with `kaizen plugins add`",
                path.display(),
                err.message()
            )
        })?;
        if lock.version != Self::VERSION {
            return Err(format!(
                "{} has format version {}, and this Kaizen reads version {}; upgrade Kaizen",
                path.display(),
                lock.version,
                Self::VERSION
            ));
        }
        Ok(Some(lock))
    }

    /// Writes the lock into `root`, replacing the file in one step.
    pub fn save(&self, root: &Path) -> std::io::Result<PathBuf> {
        let lock = Self {
            version: Self::VERSION,
            plugins: self.plugins.clone(),
        };
        let body = toml::to_string(&lock).map_err(std::io::Error::other)?;
        let path = root.join(LOCK_FILE);
        std::fs::create_dir_all(root)?;
        crate::atomic_write::write_atomically(root, &path, format!("{HEADER}\n{body}").as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> LockEntry {
        LockEntry {
            manifest: Digest::of(b"[plugin]"),
            component: Digest::of(b"\0asm"),
            signer: None,
            added_from: Some("/src/word-count".into()),
        }
    }

    #[test]
    fn a_saved_lock_loads_back_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(PluginLock::load(dir.path()).unwrap(), None);
        let mut lock = PluginLock::default();
        lock.plugins.insert("word-count".into(), entry());
        let path = lock.save(dir.path()).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.starts_with("# Kaizen's plugin lock"), "{text}");
        assert!(text.contains("component = \"blake3:"), "{text}");
        let loaded = PluginLock::load(dir.path()).unwrap().unwrap();
        assert_eq!(loaded.plugins, lock.plugins);
    }

    #[test]
    fn a_damaged_lock_is_an_error_that_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        std::fs::write(
            &path,
            "version = 1\n[plugins.x]\nmanifest = \"blake3:00\"\ncomponent = \"blake3:00\"\n",
        )
        .unwrap();
        let err = PluginLock::load(dir.path()).unwrap_err();
        assert!(err.contains("not a digest"), "{err}");
        assert!(err.contains("kaizen plugins add"), "{err}");
        std::fs::write(&path, "version = 7\n").unwrap();
        let err = PluginLock::load(dir.path()).unwrap_err();
        assert!(err.contains("version 7"), "{err}");
    }
}
