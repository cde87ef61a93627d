//! Pinned and signed plugins: what a plugin's files must be before its
//! component is compiled. A plugin directory's `plugins.lock` pins the
//! digests of each plugin's manifest and component; the user's signature
//! policy decides which minisign signatures a component needs.

mod lock;
mod signature;

pub use lock::{Digest, LOCK_FILE, LockEntry, PluginLock};
pub(crate) use signature::{Memo, Signed};
pub use signature::{SignaturePolicy, TrustedKey, signature_path};

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Reads the text file at `path`, refusing one over `limit` bytes: a lock
/// or a signature in a hostile repository may be made huge to exhaust
/// memory.
fn read_bounded(path: &Path, limit: u64, what: &str) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "it is over {limit} bytes, too large for {what}"
        )));
    }
    Ok(text)
}

/// What the lock of a plugin's directory says about it.
#[derive(Debug, Clone, Default)]
pub enum Pin {
    /// No lock covers it (a built-in, a `--plugins` directory holding one
    /// plugin, or a directory without `plugins.lock`).
    #[default]
    Unpinned,
    /// The lock records its digests.
    Recorded {
        /// The lock file.
        lock: PathBuf,
        /// What it records.
        entry: LockEntry,
    },
    /// Its directory has a lock that does not list it.
    Unlisted {
        /// The lock file.
        lock: PathBuf,
    },
    /// Its directory's lock cannot be used; the message says why.
    Broken(String),
}

impl Pin {
    /// The pin of plugin directory `dir` under `lock`, the lock of its
    /// parent directory (`Ok(None)` when there is none).
    pub fn of(dir: &Path, lock: &Result<Option<PluginLock>, String>) -> Self {
        let root = dir.parent().unwrap_or(dir);
        let name = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        match lock {
            Ok(None) => Self::Unpinned,
            Ok(Some(lock)) => match lock.plugins.get(&name) {
                Some(entry) => Self::Recorded {
                    lock: root.join(LOCK_FILE),
                    entry: entry.clone(),
                },
                None => Self::Unlisted {
                    lock: root.join(LOCK_FILE),
                },
            },
            Err(err) => Self::Broken(err.clone()),
        }
    }
}

/// How a loaded plugin's files were vouched for, for listings.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Integrity {
    /// The lock that pins it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_by: Option<PathBuf>,
    /// The trusted key that signed its component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
}

/// The files of a plugin directory as they are now.
pub(crate) struct Found<'a> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// Its directory.
    pub dir: &'a Path,
    /// Its component file.
    pub component: &'a Path,
    /// The digest of its manifest.
    pub manifest: Digest,
    /// The digest of its component.
    pub digest: Digest,
}

/// What the lock records of plugin `plugin` in `dir` (the lock file and
/// the entry), `None` when no lock covers it; refused when its directory's
/// lock does not list it or cannot be read, before anything of it is read.
pub(crate) fn recorded<'p>(
    plugin: &str,
    dir: &Path,
    pin: &'p Pin,
) -> Result<Option<(&'p Path, &'p LockEntry)>, String> {
    match pin {
        Pin::Unpinned => Ok(None),
        Pin::Recorded { lock, entry } => Ok(Some((lock, entry))),
        Pin::Broken(err) => Err(format!("plugin `{plugin}` is not loaded: {err}")),
        Pin::Unlisted { lock } => Err(format!(
            "plugin `{plugin}` ({}) is not listed in {}, which pins every plugin of its directory; if you trust it, record it with `kaizen plugins add {}`, or remove the directory",
            dir.display(),
            lock.display(),
            dir.display()
        )),
    }
}

/// Checks `found` against `entry`, what `lock` recorded: a plugin whose
/// files differ from it is refused with both digests.
pub(crate) fn check_pin(found: &Found<'_>, lock: &Path, entry: &LockEntry) -> Result<(), String> {
    let plugin = found.plugin;
    let dir = found.dir.display();
    let changed = |what: &str, path: String, now: Digest, recorded: Digest| {
        format!(
            "plugin `{plugin}`: its {what} {path} has digest {now}, but {} recorded {recorded} when it was added: it changed since. Refusing to load it; if you changed it yourself, accept it with `kaizen plugins add {dir}`",
            lock.display()
        )
    };
    if found.manifest != entry.manifest {
        let path = found.dir.join(crate::manifest::MANIFEST_FILE);
        return Err(changed(
            "manifest",
            path.display().to_string(),
            found.manifest,
            entry.manifest,
        ));
    }
    if found.digest != entry.component {
        return Err(changed(
            "component",
            found.component.display().to_string(),
            found.digest,
            entry.component,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found<'a>(dir: &'a Path, component: &'a Path, wasm: &[u8]) -> Found<'a> {
        Found {
            plugin: "word-count",
            dir,
            component,
            manifest: Digest::of(b"manifest"),
            digest: Digest::of(wasm),
        }
    }

    #[test]
    fn a_changed_component_is_refused_with_both_digests() {
        let dir = Path::new("/p/word-count");
        let component = dir.join("word-count.wasm");
        let entry = LockEntry {
            manifest: Digest::of(b"manifest"),
            component: Digest::of(b"old"),
            signer: None,
            added_from: None,
        };
        let pin = Pin::Recorded {
            lock: "/p/plugins.lock".into(),
            entry,
        };
        let (lock, entry) = recorded("word-count", dir, &pin).unwrap().unwrap();
        assert_eq!(lock, Path::new("/p/plugins.lock"));
        let err = check_pin(&found(dir, &component, b"new"), lock, entry).unwrap_err();
        assert!(err.contains(&Digest::of(b"new").to_string()), "{err}");
        assert!(err.contains(&Digest::of(b"old").to_string()), "{err}");
        assert!(err.contains("kaizen plugins add /p/word-count"), "{err}");
        check_pin(&found(dir, &component, b"old"), lock, entry).unwrap();
    }

    #[test]
    fn an_unlisted_plugin_under_a_lock_is_refused() {
        let mut lock = PluginLock::default();
        lock.plugins.insert(
            "other".into(),
            LockEntry {
                manifest: Digest::of(b""),
                component: Digest::of(b""),
                signer: None,
                added_from: None,
            },
        );
        let dir = Path::new("/p/word-count");
        let pin = Pin::of(dir, &Ok(Some(lock)));
        assert!(matches!(pin, Pin::Unlisted { .. }));
        let err = recorded("word-count", dir, &pin).unwrap_err();
        assert!(err.contains("not listed in /p/plugins.lock"), "{err}");
        assert!(matches!(Pin::of(dir, &Ok(None)), Pin::Unpinned));
    }
}
