//! `kaizen plugins add PATH` and `kaizen plugins remove NAME`: installing
//! a plugin into the user's (or the workspace's) plugin directory and
//! recording its digests in that directory's `plugins.lock`, so that a
//! later change to its files is refused instead of run.

use anyhow::{Context as _, bail};
use kaizen_app::config::Setup;
use kaizen_app::kits::plugin_dir;
use kaizen_app::plugin_host::checking_host;
use kaizen_plugins::{
    Digest, LOCK_FILE, Location, LockEntry, MANIFEST_FILE, Manifest, Origin, Pin, PluginLock,
    PluginSource, plugin_dirs, signature_path,
};
use std::fmt::Write as _;
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

/// `kaizen plugins add PATH`.
pub async fn add(path: &Path, target: &Target) -> anyhow::Result<()> {
    let (setup, root) = target.resolve()?;
    let source = plugin_dir(path)?;
    let files = PluginFiles::read(&source)?;
    let name = files.manifest.plugin.name.clone();
    let host = checking_host(&setup.kaizen_home, &setup.signatures)?;
    // What cannot run anywhere is refused; what the grants refuse is only
    // told (the user may grant it next).
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
    let warning = host
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
    let entry = files.entry(signer.clone(), &source);
    let previous = lock.plugins.insert(name.clone(), entry.clone());
    let lock_path = lock.save(&root).context("writing the plugin lock")?;

    let mut out = String::new();
    let version = &files.manifest.plugin.version;
    let _ = writeln!(out, "added {name} {version} to {}", dest.display());
    if let Some(previous) = previous.filter(|p| p.component != entry.component) {
        let _ = writeln!(out, "  replaced: component {}", previous.component);
    }
    let _ = writeln!(out, "  component {}", entry.component);
    let _ = writeln!(out, "  manifest  {}", entry.manifest);
    let _ = writeln!(
        out,
        "  signed:   {}",
        signer
            .as_deref()
            .map_or("no".into(), |key| format!("by {key}"))
    );
    let _ = writeln!(out, "  pinned in {}", lock_path.display());
    if !newly_pinned.is_empty() {
        let _ = writeln!(
            out,
            "  {} now has a lock, so the plugins already there were pinned as they are: {}",
            root.display(),
            newly_pinned.join(", ")
        );
    }
    if let Some(warning) = warning {
        let _ = writeln!(out, "note: as configured now it does not load: {warning}");
    }
    if target.workspace && setup.trust != kaizen_app::trust::TrustStatus::Trusted {
        let _ = writeln!(
            out,
            "note: this workspace is not trusted, so its plugins do not load; trust it with `kaizen trust`"
        );
    }
    print!("{out}");
    Ok(())
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

/// `kaizen plugins remove NAME`.
pub fn remove(name: &str, target: &Target) -> anyhow::Result<()> {
    let (_, root) = target.resolve()?;
    let dest = root.join(name);
    let mut lock = PluginLock::load(&root).map_err(anyhow::Error::msg)?;
    let recorded = lock
        .as_mut()
        .is_some_and(|lock| lock.plugins.remove(name).is_some());
    let installed = dest.join(MANIFEST_FILE).is_file();
    if !recorded && !installed {
        bail!(
            "no plugin `{name}` in {}; `kaizen plugins list` shows where each plugin comes from",
            root.display()
        );
    }
    if installed {
        std::fs::remove_dir_all(&dest).with_context(|| format!("removing {}", dest.display()))?;
    }
    if let Some(lock) = lock.filter(|_| recorded) {
        lock.save(&root).context("writing the plugin lock")?;
    }
    println!(
        "removed {name} from {}{}",
        root.display(),
        if recorded {
            format!(" and its entry in {LOCK_FILE}")
        } else {
            String::new()
        }
    );
    Ok(())
}
