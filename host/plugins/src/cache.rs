//! The precompile cache: compiled components on disk, keyed by the engine's
//! compatibility hash and the component's content hash. Each artifact
//! carries a checksum of itself, so a torn or tampered file is detected and
//! recompiled, never handed to `deserialize`.

use anyhow::Context as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 8] = b"KZNCWSM1";
const HEADER_LEN: usize = MAGIC.len() + blake3::OUT_LEN;

/// Where a component came from on this load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// A valid artifact was found and deserialized.
    Hit,
    /// No artifact existed; the component was compiled and stored.
    Compiled,
    /// An artifact existed but failed its checksum or deserialization; it
    /// was replaced by a fresh compile.
    Replaced,
    /// No cache directory is configured; compiled in memory.
    Uncached,
}

/// Compiled components under one directory.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: PathBuf,
}

impl ComponentCache {
    /// A cache rooted at `root`, partitioned by `compatibility_key` so that
    /// another wasmtime version or setting never sees these artifacts.
    pub fn new(root: &Path, compatibility_key: &str) -> Self {
        Self {
            dir: root.join(compatibility_key),
        }
    }

    /// The directory holding this engine's artifacts.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn artifact_path(&self, content_hash: &blake3::Hash) -> PathBuf {
        self.dir.join(format!("{}.cwasm", content_hash.to_hex()))
    }

    /// Loads the component for `wasm`, whose BLAKE3 is `content_hash`, from
    /// the cache when a valid artifact exists, else by compiling (and
    /// storing the result).
    pub fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        content_hash: &blake3::Hash,
    ) -> anyhow::Result<(Component, CacheOutcome)> {
        let path = self.artifact_path(content_hash);
        let outcome = match fs::read(&path) {
            Ok(bytes) => match verified_payload(&bytes) {
                // SAFETY: the payload's checksum matches what this process
                // family wrote after `precompile_component` on an engine
                // with the same compatibility key.
                Some(payload) => match unsafe { Component::deserialize(engine, payload) } {
                    Ok(component) => return Ok((component, CacheOutcome::Hit)),
                    Err(err) => {
                        tracing::warn!("discarding cached {}: {err:#}", path.display());
                        CacheOutcome::Replaced
                    }
                },
                None => {
                    tracing::warn!(
                        "discarding corrupt cached artifact {} (checksum mismatch)",
                        path.display()
                    );
                    CacheOutcome::Replaced
                }
            },
            Err(_) => CacheOutcome::Compiled,
        };
        let compiled = engine.precompile_component(wasm)?;
        if let Err(err) = self.store(&path, &compiled) {
            tracing::warn!(
                "could not write the compile cache at {}: {err:#}",
                path.display()
            );
        }
        // SAFETY: `compiled` was produced by this engine just now.
        let component = unsafe { Component::deserialize(engine, &compiled)? };
        Ok((component, outcome))
    }

    /// Writes atomically: temp file, fsync, rename.
    fn store(&self, path: &Path, compiled: &[u8]) -> anyhow::Result<()> {
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let mut tmp = tempfile_in(&self.dir)?;
        tmp.1.write_all(MAGIC)?;
        tmp.1.write_all(blake3::hash(compiled).as_bytes())?;
        tmp.1.write_all(compiled)?;
        tmp.1.sync_all()?;
        fs::rename(&tmp.0, path).with_context(|| format!("renaming into {}", path.display()))?;
        Ok(())
    }
}

/// The compiled bytes of an artifact whose header and checksum are intact.
fn verified_payload(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.len() < HEADER_LEN || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    let (header, payload) = bytes.split_at(HEADER_LEN);
    let expected: [u8; blake3::OUT_LEN] = header[MAGIC.len()..].try_into().ok()?;
    (blake3::hash(payload) == blake3::Hash::from_bytes(expected)).then_some(payload)
}

fn tempfile_in(dir: &Path) -> anyhow::Result<(PathBuf, fs::File)> {
    let path = dir.join(format!(
        ".tmp-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    let file = fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_verification_rejects_damage() {
        let payload = b"compiled code".to_vec();
        let mut artifact = MAGIC.to_vec();
        artifact.extend_from_slice(blake3::hash(&payload).as_bytes());
        artifact.extend_from_slice(&payload);
        assert_eq!(verified_payload(&artifact), Some(&payload[..]));

        let mut flipped = artifact.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(verified_payload(&flipped), None);

        assert_eq!(verified_payload(&artifact[..artifact.len() - 3]), None);
        assert_eq!(verified_payload(&artifact[..10]), None);
        let mut wrong_magic = artifact.clone();
        wrong_magic[0] = b'X';
        assert_eq!(verified_payload(&wrong_magic), None);
    }
}
