//! Reading a plugin's files: its manifest, and its component's digest
//! (its bytes only when the compile cache cannot vouch for them), checked
//! against the lock that pins it and the signatures the user requires,
//! all before anything is compiled.

use crate::cache::ComponentCache;
use crate::discovery::{EmbeddedBytes, Location, PluginSource, Precompiled};
use crate::manifest::Manifest;
use crate::pinning::{Digest, Found, Integrity, SignaturePolicy, Signed, check_pin, recorded};
use anyhow::Context as _;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A component's bytes: at hand, in the binary (a built-in's, perhaps
/// packed), or on disk; the last two read only if the cache cannot serve
/// it.
pub(crate) enum Wasm<'a> {
    Bytes(Cow<'a, [u8]>),
    Embedded(EmbeddedBytes),
    File(PathBuf),
}

impl Wasm<'_> {
    pub(crate) fn bytes(&self) -> anyhow::Result<Cow<'_, [u8]>> {
        match self {
            Wasm::Bytes(bytes) => Ok(Cow::Borrowed(bytes)),
            Wasm::Embedded(embedded) => embedded
                .bytes()
                .context("unpacking the component embedded in the binary"),
            Wasm::File(path) => std::fs::read(path)
                .map(Cow::Owned)
                .with_context(|| format!("reading {}", path.display())),
        }
    }
}

/// What a plugin's files are, read and vouched for.
pub(crate) struct SourceParts {
    /// The checked manifest.
    pub manifest: Manifest,
    /// The component.
    pub wasm: Wasm<'static>,
    /// The component's BLAKE3.
    pub hash: blake3::Hash,
    /// A label for messages: the component file or `builtin:NAME`.
    pub label: String,
    /// A built-in's code compiled when the binary was built.
    pub precompiled: Option<Precompiled>,
    /// What pins and signs it.
    pub integrity: Integrity,
}

/// Why a plugin's files were not taken, with its manifest when that was
/// read (listings show what it requested).
pub(crate) struct SourceError {
    pub manifest: Option<Box<Manifest>>,
    pub message: String,
}

impl From<String> for SourceError {
    fn from(message: String) -> Self {
        Self {
            manifest: None,
            message,
        }
    }
}

/// Reads `source` and checks it against its pin and `signatures`; a
/// built-in, which lives in the binary, needs neither.
pub(crate) fn read_source(
    source: &PluginSource,
    cache: Option<&ComponentCache>,
    signatures: &SignaturePolicy,
) -> Result<SourceParts, SourceError> {
    match &source.location {
        Location::Dir(dir) => {
            let (manifest, text) = Manifest::load_text(dir).map_err(|err| err.to_string())?;
            read_dir_source(source, dir, manifest, &text, cache, signatures)
        }
        Location::Embedded {
            name,
            manifest,
            wasm,
            hash,
            precompiled,
        } => {
            let label = format!("builtin:{name}");
            let manifest =
                Manifest::parse(manifest, Path::new(&label)).map_err(|e| e.to_string())?;
            Ok(SourceParts {
                manifest,
                wasm: Wasm::Embedded(*wasm),
                hash: blake3::Hash::from_bytes(*hash),
                label,
                precompiled: *precompiled,
                integrity: Integrity::default(),
            })
        }
    }
}

/// The component of the plugin directory `dir` whose manifest is
/// `manifest` (with text `text`), vouched for.
fn read_dir_source(
    source: &PluginSource,
    dir: &Path,
    manifest: Manifest,
    text: &str,
    cache: Option<&ComponentCache>,
    signatures: &SignaturePolicy,
) -> Result<SourceParts, SourceError> {
    let path = manifest.component_path(dir);
    let checked = (|| {
        let recorded = recorded(&manifest.plugin.name, dir, &source.pin)?;
        let missing = |err| missing_component(&manifest, &path, err);
        let (hash, wasm) = match cache {
            // An unchanged component the cache knows is not read.
            Some(cache) => {
                let (hash, bytes) = cache.source_hash(&path).map_err(missing)?;
                let wasm = match bytes {
                    Some(bytes) => Wasm::Bytes(Cow::Owned(bytes)),
                    None => Wasm::File(path.clone()),
                };
                (hash, wasm)
            }
            None => {
                let bytes = std::fs::read(&path).map_err(missing)?;
                (blake3::hash(&bytes), Wasm::Bytes(Cow::Owned(bytes)))
            }
        };
        let plugin = &manifest.plugin.name;
        let found = Found {
            plugin,
            dir,
            component: &path,
            manifest: Digest::of(text.as_bytes()),
            digest: Digest(hash),
        };
        if let Some((lock, entry)) = recorded {
            check_pin(&found, lock, entry)?;
        }
        let pinned_by = recorded.map(|(lock, _)| lock.to_path_buf());
        let signed = Signed {
            plugin,
            component: &path,
            digest: &hash,
        };
        let signed_by = signatures.check(&signed, || wasm.bytes(), cache.map(|c| c.memo()))?;
        Ok((
            wasm,
            hash,
            Integrity {
                pinned_by,
                signed_by,
            },
        ))
    })();
    match checked {
        Ok((wasm, hash, integrity)) => Ok(SourceParts {
            wasm,
            hash,
            label: path.display().to_string(),
            precompiled: None,
            integrity,
            manifest,
        }),
        Err(message) => Err(SourceError {
            manifest: Some(Box::new(manifest)),
            message,
        }),
    }
}

fn missing_component(manifest: &Manifest, path: &Path, err: std::io::Error) -> String {
    if err.kind() == std::io::ErrorKind::NotFound {
        format!(
            "plugin `{}`: its component {} does not exist; build the plugin, or set `component` in plugin.toml to the .wasm file's name",
            manifest.plugin.name,
            path.display()
        )
    } else {
        format!(
            "plugin `{}`: cannot read {}: {err}",
            manifest.plugin.name,
            path.display()
        )
    }
}
