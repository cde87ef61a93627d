//! Where plugins come from and how their directories are found.

use crate::manifest::MANIFEST_FILE;
use crate::origin::Origin;
use crate::pinning::{Pin, PluginLock};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The bytes of a plugin: a directory on disk or one embedded in the binary.
#[derive(Debug, Clone)]
pub enum Location {
    /// A directory holding `plugin.toml` and the component.
    Dir(PathBuf),
    /// A built-in: manifest text, component bytes and their content hash
    /// computed at build time.
    Embedded {
        /// The plugin's name, for messages before the manifest is read.
        name: &'static str,
        /// The `plugin.toml` text.
        manifest: &'static str,
        /// The component, read only when there is no compiled code to
        /// take instead.
        wasm: EmbeddedBytes,
        /// BLAKE3 of the component.
        hash: [u8; 32],
        /// `wasm` compiled at build time, when the build could.
        precompiled: Option<Precompiled>,
    },
}

/// A component compiled ahead of time, embedded beside its `.wasm`.
#[derive(Debug, Clone, Copy)]
pub struct Precompiled {
    /// The compatibility key of the engine that compiled it
    /// (`kaizen_wasm_config::compatibility_key`); an engine with another key
    /// compiles the `.wasm` instead.
    pub compatibility_key: &'static str,
    /// The compiled code, for `Component::deserialize`. With a compile
    /// cache, it is unpacked once and kept there: later loads map it from
    /// the cache.
    pub code: EmbeddedBytes,
}

/// Bytes embedded in the binary, as they are or packed smaller (the
/// binary's own business: it gives the function that unpacks them).
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedBytes {
    /// The bytes as the binary holds them.
    pub stored: &'static [u8],
    /// Turns `stored` into the bytes meant; `None` when they are stored
    /// as they are.
    pub unpack: Option<Unpack>,
}

/// What turns packed [`EmbeddedBytes`] into the bytes meant.
pub type Unpack = fn(&'static [u8]) -> std::io::Result<Vec<u8>>;

impl EmbeddedBytes {
    /// The bytes meant: borrowed when stored as they are, else unpacked
    /// now (each call unpacks again).
    pub fn bytes(&self) -> std::io::Result<Cow<'static, [u8]>> {
        match self.unpack {
            Some(unpack) => unpack(self.stored).map(Cow::Owned),
            None => Ok(Cow::Borrowed(self.stored)),
        }
    }
}

/// One plugin to load.
#[derive(Debug, Clone)]
pub struct PluginSource {
    /// Where it was found.
    pub origin: Origin,
    /// Its bytes.
    pub location: Location,
    /// What its directory's lock records of it.
    pub pin: Pin,
}

impl PluginSource {
    /// A label for messages: the directory, or `builtin:NAME`.
    pub fn label(&self) -> String {
        match &self.location {
            Location::Dir(dir) => dir.display().to_string(),
            Location::Embedded { name, .. } => format!("builtin:{name}"),
        }
    }
}

/// The plugin directories under `root`: `root` itself when it holds a
/// manifest, else each subdirectory that holds one (sorted by name).
/// Subdirectories without a manifest are reported too, so a typo does not
/// go unnoticed; a missing `root` yields nothing.
pub fn plugin_dirs(root: &Path) -> Vec<PathBuf> {
    if root.join(MANIFEST_FILE).is_file() {
        return vec![root.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .filter(|path| {
            !path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    dirs.sort();
    dirs
}

/// Sources for every plugin directory under `roots`, in order, each with
/// what its root's `plugins.lock` records of it (a root that is itself a
/// plugin directory has no lock).
pub fn sources_in(roots: &[(PathBuf, Origin)]) -> Vec<PluginSource> {
    roots
        .iter()
        .flat_map(|(root, origin)| {
            let dirs = plugin_dirs(root);
            let lock = match dirs.first() {
                Some(first) if first != root => PluginLock::load(root),
                _ => Ok(None),
            };
            dirs.into_iter().map(move |dir| PluginSource {
                origin: *origin,
                pin: Pin::of(&dir, &lock),
                location: Location::Dir(dir),
            })
        })
        .collect()
}
