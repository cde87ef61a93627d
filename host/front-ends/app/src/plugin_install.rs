//! Installing a plugin into the user's (or the workspace's) plugin
//! directory and recording its digests in that directory's
//! `plugins.lock`, so that a later change to its files is refused instead
//! of run; and removing one with its entry.

use crate::config::Setup;
use crate::kits::plugin_dir;
use crate::plugin_host::checking_host;
use crate::trust::TrustStatus;
use anyhow::Context as _;
use kaizen_plugin_host::{
    Digest, Location, LockEntry, MANIFEST_FILE, Manifest, Origin, Pin, PluginLock, PluginSource,
    plugin_dirs, signature_path,
};
use std::path::{Path, PathBuf};

/// Where a plugin goes: the user's plugin directory, or the workspace's.
pub struct Target {
    /// `--cwd`.
    pub cwd: Option<PathBuf>,
    /// `--workspace`: the workspace's `.kaizen/plugins`.
    pub workspace: bool,
}

impl Target {
    fn resolve(&self) -> anyhow::Result<(Setup, PathBuf)> {
        let setup = Setup::new(self.cwd.as_deref(), &[], &[], None)?;
        let root = match self.workspace {
            true => setup.workspace.join(".kaizen").join("plugins"),
            false => setup.kaizen_home.join("plugins"),
        };
        Ok((setup, root))
    }
}

/// A plugin added.
pub struct Added {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The plugin directory it went into.
    pub root: PathBuf,
    /// Its own directory there.
    pub dest: PathBuf,
    /// Its entry in the lock (its digests, who signed it).
    pub entry: LockEntry,
    /// The component it replaced, when there was another.
    pub replaced: Option<Digest>,
    /// The lock file.
    pub lock_path: PathBuf,
    /// The plugins already in a directory that had no lock, pinned as
    /// they were.
    pub newly_pinned: Vec<String>,
    /// Why it does not load as configured now, if it does not.
    pub refused: Option<String>,
    /// Added to a workspace that is not trusted, whose plugins do not load.
    pub untrusted_workspace: bool,
}

/// `kaizen plugins add PATH`: the plugin at `path` (built), checked,
/// copied into `target`'s directory and pinned there. What cannot run
/// anywhere is refused; what the grants refuse is only told in
/// [`Added::refused`] (the user may grant it next).
pub async fn add(path: &Path, target: &Target) -> anyhow::Result<Added> {
    let (setup, root) = target.resolve()?;
    let source = plugin_dir(path)?;
    let files = PluginFiles::read(&source)?;
    let name = files.manifest.plugin.name.clone();
    let host = checking_host(&setup.kaizen_home, &setup.signatures)?;
    let label = source.join(&files.component).display().to_string();
    host.component(&files.wasm, &blake3::hash(&files.wasm), &label)
        .map_err(|err| anyhow::anyhow!("cannot add `{name}`: {err}"))?;
    let signer = setup
        .signatures
        .verify(&name, &source.join(&files.component), &files.wasm)
        .map_err(|err| anyhow::anyhow!("cannot add `{name}`: {err}"))?;
    let trial = PluginSource {
        origin: if target.workspace {
            Origin::Workspace
        } else {
            Origin::User
        },
        location: Location::Dir(source.clone()),
        pin: Pin::Unpinned,
    };
    let refused = host
        .load(&trial, &setup.policy)
        .await
        .err()
        .map(|err| err.message);

    std::fs::create_dir_all(&root)
        .with_context(|| format!("creating the plugin directory {}", root.display()))?;
    let (mut lock, newly_pinned) = lock_of(&root)?;
    let dest = root.join(&name);
    if dest.canonicalize().ok().as_deref() != Some(source.as_path()) {
        install(&files, &root, &dest)?;
    }
    let entry = files.entry(signer, &source);
    let previous = lock.plugins.insert(name.clone(), entry.clone());
    let lock_path = lock.save(&root).context("writing the plugin lock")?;
    Ok(Added {
        version: files.manifest.plugin.version.clone(),
        replaced: previous
            .map(|p| p.component)
            .filter(|component| *component != entry.component),
        name,
        root,
        dest,
        entry,
        lock_path,
        newly_pinned,
        refused,
        untrusted_workspace: target.workspace && setup.trust != TrustStatus::Trusted,
    })
}

/// A plugin named that is neither installed nor in the lock.
#[derive(Debug, thiserror::Error)]
#[error(
    "no plugin `{name}` in {}; `kaizen plugins list` shows where each plugin comes from",
    root.display()
)]
pub struct NotInstalled {
    /// The name given.
    pub name: String,
    /// The plugin directory looked in.
    pub root: PathBuf,
}

/// A plugin removed.
pub struct Removed {
    /// The plugin directory it was removed from.
    pub root: PathBuf,
    /// Whether its entry in the lock was removed too.
    pub unpinned: bool,
}

/// `kaizen plugins remove NAME`: the plugin's directory and its lock
/// entry, whichever there are.
pub fn remove(name: &str, target: &Target) -> anyhow::Result<Removed> {
    let (_, root) = target.resolve()?;
    let dest = root.join(name);
    let mut lock = PluginLock::load(&root).map_err(anyhow::Error::msg)?;
    let recorded = lock
        .as_mut()
        .is_some_and(|lock| lock.plugins.remove(name).is_some());
    let installed = dest.join(MANIFEST_FILE).is_file();
    if !recorded && !installed {
        let name = name.to_string();
        return Err(NotInstalled { name, root }.into());
    }
    if installed {
        std::fs::remove_dir_all(&dest).with_context(|| format!("removing {}", dest.display()))?;
    }
    if let Some(lock) = lock.filter(|_| recorded) {
        lock.save(&root).context("writing the plugin lock")?;
    }
    Ok(Removed {
        root,
        unpinned: recorded,
    })
}

/// The files that make up a plugin, read once: what is copied is what is
/// pinned.
struct PluginFiles {
    manifest: Manifest,
    manifest_text: String,
    /// The component, relative to the plugin directory.
    component: PathBuf,
    wasm: Vec<u8>,
    signature: Option<String>,
}

impl PluginFiles {
    fn read(dir: &Path) -> anyhow::Result<Self> {
        let (manifest, manifest_text) =
            Manifest::load_text(dir).map_err(|err| anyhow::anyhow!("{err}"))?;
        let path = manifest.component_path(dir);
        let wasm = std::fs::read(&path).with_context(|| {
            format!(
                "reading the component {}; build the plugin first (kaizen plugins build {})",
                path.display(),
                dir.display()
            )
        })?;
        let signature = match std::fs::read_to_string(signature_path(&path)) {
            Ok(text) => Some(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(err).context("reading the component's signature"),
        };
        let component = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
        Ok(Self {
            manifest,
            manifest_text,
            component,
            wasm,
            signature,
        })
    }

    fn entry(&self, signer: Option<String>, from: &Path) -> LockEntry {
        LockEntry {
            manifest: Digest::of(self.manifest_text.as_bytes()),
            component: Digest::of(&self.wasm),
            signer,
            added_from: Some(from.display().to_string()),
        }
    }

    /// Writes the files into a new directory `dir`.
    fn write(&self, dir: &Path) -> std::io::Result<()> {
        let component = dir.join(&self.component);
        if let Some(parent) = component.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(dir.join(MANIFEST_FILE), &self.manifest_text)?;
        std::fs::write(&component, &self.wasm)?;
        if let Some(signature) = &self.signature {
            std::fs::write(signature_path(&component), signature)?;
        }
        Ok(())
    }
}

/// The lock of `root`, or a new one that pins the plugins already there
/// (they loaded before; a lock must not silently turn them away), with
/// their names.
fn lock_of(root: &Path) -> anyhow::Result<(PluginLock, Vec<String>)> {
    if let Some(lock) = PluginLock::load(root).map_err(anyhow::Error::msg)? {
        return Ok((lock, Vec::new()));
    }
    let mut lock = PluginLock::default();
    let mut pinned = Vec::new();
    for dir in plugin_dirs(root).into_iter().filter(|dir| dir != root) {
        let Some(key) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        // A directory that is not a plugin stays unlisted, and is refused
        // as it was before.
        if let Ok(files) = PluginFiles::read(&dir) {
            lock.plugins.insert(key.clone(), files.entry(None, &dir));
            pinned.push(key);
        }
    }
    Ok((lock, pinned))
}

/// Puts `files` at `dest`, replacing what is there in one rename.
fn install(files: &PluginFiles, root: &Path, dest: &Path) -> anyhow::Result<()> {
    let staging = tempfile::Builder::new()
        .prefix(".adding-")
        .tempdir_in(root)
        .context("creating a staging directory")?;
    files
        .write(staging.path())
        .with_context(|| format!("copying the plugin into {}", root.display()))?;
    if dest.exists() {
        std::fs::remove_dir_all(dest)
            .with_context(|| format!("removing the old {}", dest.display()))?;
    }
    std::fs::rename(staging.keep(), dest)
        .with_context(|| format!("moving the plugin into {}", dest.display()))?;
    Ok(())
}
