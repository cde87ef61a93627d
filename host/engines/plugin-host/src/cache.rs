//! The precompile cache: compiled components on disk, keyed by the engine's
//! compatibility hash and the component's content hash.
//!
//! Deserializing an artifact runs its machine code in the host, so an
//! artifact must prove it was written by Kaizen: beside each `<hash>.cwasm`
//! lies `<hash>.mac`, a keyed BLAKE3 of it under a secret key kept beside
//! the cache (`<cache>.key`, readable by the user only, created on first
//! use). A torn, tampered or forged file (one whose plain checksum was
//! recomputed, say) fails the check and is recompiled with a warning,
//! never handed to `deserialize`. The cache and its key must lie outside
//! every directory granted to plugins: the CLI keeps both under
//! `KAIZEN_HOME`, which no tool can reach.
//!
//! Checking costs a read and a hash of the whole artifact (tens of MB for
//! a Python component), so a file that passed is remembered
//! ([`crate::verified`]): while it stays unchanged it is mapped straight
//! from disk. Plugin sources are remembered the same way, so an unchanged
//! component is not even read to find its hash.

use crate::atomic_write::{tempfile_name, write_atomically};
use crate::verified::VerifiedFiles;
use anyhow::Context as _;
use std::borrow::Cow;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Leads each artifact's MAC file. (Version 4 binds the MAC to the
/// component's content hash: an artifact and its MAC copied into another
/// component's slot no longer authenticate there.)
const MAGIC: &[u8; 8] = b"KZNCMAC4";
/// Bytes of the cache key.
const KEY_LEN: usize = 32;
const MAC_FILE_LEN: usize = MAGIC.len() + blake3::OUT_LEN;

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
    /// Compiled when the binary was built, and embedded in it.
    Precompiled,
}

/// Compiled components under one directory.
#[derive(Clone)]
pub struct ComponentCache {
    dir: PathBuf,
    key: [u8; KEY_LEN],
    verified: VerifiedFiles,
}

impl std::fmt::Debug for ComponentCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl ComponentCache {
    /// A cache rooted at `root`, partitioned by `compatibility_key` so that
    /// another wasmtime version or setting never sees these artifacts, and
    /// authenticated with the key in `<root>.key` (created when missing).
    pub fn new(root: &Path, compatibility_key: &str) -> anyhow::Result<Self> {
        let dir = root.join(compatibility_key);
        let key = load_or_create_key(&key_path(root))?;
        Ok(Self {
            verified: VerifiedFiles::new(dir.join("verified"), key),
            dir,
            key,
        })
    }

    /// The BLAKE3 of the component at `path`, and its bytes when they had
    /// to be read for it: a file verified before and unchanged since is
    /// neither read nor hashed again.
    pub fn source_hash(&self, path: &Path) -> std::io::Result<(blake3::Hash, Option<Vec<u8>>)> {
        let meta = fs::metadata(path)?;
        if let Some(hash) = self.verified.lookup(path, &meta) {
            return Ok((hash, None));
        }
        let wasm = fs::read(path)?;
        let hash = blake3::hash(&wasm);
        self.verified.record(path, &meta, &hash);
        Ok((hash, Some(wasm)))
    }

    /// What remembers verified signatures.
    pub(crate) fn memo(&self) -> &dyn crate::pinning::Memo {
        &self.verified
    }

    /// The directory holding this engine's artifacts.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn artifact_path(&self, content_hash: &blake3::Hash) -> PathBuf {
        self.dir.join(format!("{}.cwasm", content_hash.to_hex()))
    }

    fn mac_path(&self, content_hash: &blake3::Hash) -> PathBuf {
        self.dir.join(format!("{}.mac", content_hash.to_hex()))
    }

    /// Loads the component whose BLAKE3 is `content_hash` from the cache
    /// when a valid artifact exists, else by compiling the bytes `wasm`
    /// gives (and storing the result).
    ///
    /// An artifact verified before and unchanged since is mapped straight
    /// from its file; otherwise it is read and its keyed checksum checked
    /// first.
    pub fn load<'w>(
        &self,
        engine: &Engine,
        content_hash: &blake3::Hash,
        wasm: impl FnOnce() -> anyhow::Result<Cow<'w, [u8]>>,
    ) -> anyhow::Result<(Component, CacheOutcome)> {
        self.load_or(engine, content_hash, || {
            Ok(engine.precompile_component(&wasm()?)?.into())
        })
    }

    /// [`Self::load`] for a component whose compiled code is at hand (a
    /// built-in's, compiled when the binary was built, for an engine with
    /// this cache's compatibility key): on a miss, `compiled` gives the
    /// code to store instead of a compile. A built-in's code is packed in
    /// the binary, so it is unpacked once and mapped from here after.
    ///
    /// # Safety
    ///
    /// What `compiled` gives must be `precompile_component`'s output for the
    /// component `content_hash`, from an engine whose compatibility key is
    /// this cache's, and unchanged since: it is stored as Kaizen's own
    /// compile, and its machine code runs in this process.
    pub unsafe fn load_compiled<'c>(
        &self,
        engine: &Engine,
        content_hash: &blake3::Hash,
        compiled: impl FnOnce() -> anyhow::Result<Cow<'c, [u8]>>,
    ) -> anyhow::Result<(Component, CacheOutcome)> {
        self.load_or(engine, content_hash, compiled)
    }

    /// The valid artifact for `content_hash`, else the code `compiled`
    /// gives, stored.
    fn load_or<'c>(
        &self,
        engine: &Engine,
        content_hash: &blake3::Hash,
        compiled: impl FnOnce() -> anyhow::Result<Cow<'c, [u8]>>,
    ) -> anyhow::Result<(Component, CacheOutcome)> {
        let path = self.artifact_path(content_hash);
        // An artifact without its MAC is an older cache's, or a store that
        // was cut short: compiled again without a word.
        let stored = fs::metadata(&path)
            .ok()
            .filter(|_| self.mac_path(content_hash).exists());
        let outcome = match stored {
            Some(meta) => match self.load_artifact(engine, &path, &meta, content_hash) {
                Ok(component) => return Ok((component, CacheOutcome::Hit)),
                Err(why) => {
                    tracing::warn!(
                        "discarding cached artifact {}: {why}; compiling the component again",
                        path.display()
                    );
                    CacheOutcome::Replaced
                }
            },
            None => CacheOutcome::Compiled,
        };
        let compiled = compiled()?;
        if let Err(err) = self.store(content_hash, &compiled) {
            tracing::warn!(
                "could not write the compile cache at {}: {err:#}",
                path.display()
            );
        }
        // SAFETY: `compiled` was produced just now by this engine, or (the
        // promise of `load_compiled`'s caller) for an engine with the same
        // compatibility key.
        let component = unsafe { Component::deserialize(engine, &compiled)? };
        Ok((component, outcome))
    }

    /// The artifact at `path` (with metadata `meta`), once it proves to be
    /// Kaizen's own compile of `content_hash`.
    fn load_artifact(
        &self,
        engine: &Engine,
        path: &Path,
        meta: &fs::Metadata,
        content_hash: &blake3::Hash,
    ) -> Result<Component, String> {
        if self.verified.lookup(path, meta) == Some(*content_hash) {
            // SAFETY: this file, unchanged since (its identity matches a
            // record only this cache's key can make), passed the keyed
            // checksum below; it lies where no plugin or program can write.
            return unsafe { Component::deserialize_file(engine, path) }
                .map_err(|err| format!("{err:#}"));
        }
        let payload = fs::read(path).map_err(|err| err.to_string())?;
        let mac = fs::read(self.mac_path(content_hash)).unwrap_or_default();
        if !authentic(&self.key, content_hash, &payload, &mac) {
            return Err(
                "it is damaged or was not written by Kaizen (its keyed checksum does \
                        not match)"
                    .into(),
            );
        }
        // SAFETY: the payload's keyed hash proves it was written by a Kaizen
        // holding this cache's key, after `precompile_component` on an
        // engine with the same compatibility key.
        let component = unsafe { Component::deserialize(engine, &payload) }
            .map_err(|err| format!("{err:#}"))?;
        self.verified.record(path, meta, content_hash);
        Ok(component)
    }

    /// Writes the artifact and its MAC, each atomically (temp file, fsync,
    /// rename); the MAC last, so that a torn write is never authentic.
    fn store(&self, content_hash: &blake3::Hash, compiled: &[u8]) -> anyhow::Result<()> {
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let mut mac = MAGIC.to_vec();
        mac.extend_from_slice(keyed(&self.key, content_hash, compiled).as_bytes());
        for (path, bytes) in [
            (self.artifact_path(content_hash), compiled),
            (self.mac_path(content_hash), &mac[..]),
        ] {
            write_atomically(&self.dir, &path, bytes)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }
}

/// The keyed BLAKE3 of `payload` as the compile of the component whose
/// content hash is `content_hash`.
fn keyed(key: &[u8; KEY_LEN], content_hash: &blake3::Hash, payload: &[u8]) -> blake3::Hash {
    let mut hasher = blake3::Hasher::new_keyed(key);
    hasher.update(content_hash.as_bytes());
    hasher.update(payload);
    hasher.finalize()
}

/// Whether `mac` (a MAC file's bytes) authenticates `payload` under `key`
/// as the compile of the component `content_hash`.
fn authentic(key: &[u8; KEY_LEN], content_hash: &blake3::Hash, payload: &[u8], mac: &[u8]) -> bool {
    if mac.len() != MAC_FILE_LEN || &mac[..MAGIC.len()] != MAGIC {
        return false;
    }
    let Ok(expected) = <[u8; blake3::OUT_LEN]>::try_from(&mac[MAGIC.len()..]) else {
        return false;
    };
    // `Hash`'s equality runs in constant time.
    keyed(key, content_hash, payload) == blake3::Hash::from_bytes(expected)
}

/// Where the key of the cache rooted at `root` is kept: beside it.
fn key_path(root: &Path) -> PathBuf {
    let mut name = root.file_name().unwrap_or_default().to_os_string();
    name.push(".key");
    root.with_file_name(name)
}

/// The key in `path`, or a new random one written there (mode 0600,
/// published with a hard link so that concurrent first runs agree on one).
fn load_or_create_key(path: &Path) -> anyhow::Result<[u8; KEY_LEN]> {
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let read = |path: &Path| -> anyhow::Result<Option<[u8; KEY_LEN]>> {
        match fs::read(path) {
            Ok(bytes) => {
                let mode = fs::metadata(path)?.permissions().mode();
                anyhow::ensure!(
                    mode & 0o077 == 0,
                    "the compile cache key {} is readable by others (mode {:o}); remove it and \
                     the cache beside it, and Kaizen makes new ones",
                    path.display(),
                    mode & 0o777
                );
                let key = bytes.try_into().map_err(|_| {
                    anyhow::anyhow!(
                        "the compile cache key {} is damaged; remove it and the cache beside it",
                        path.display()
                    )
                })?;
                Ok(Some(key))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err).with_context(|| format!("reading {}", path.display())),
        }
    };
    if let Some(key) = read(path)? {
        return Ok(key);
    }
    let dir = path.parent().context("the cache key has no directory")?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut key = [0u8; KEY_LEN];
    fs::File::open("/dev/urandom")
        .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut key))
        .context("reading /dev/urandom for the compile cache key")?;
    let tmp = tempfile_name(dir, ".key");
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("creating {}", tmp.display()))?;
    file.write_all(&key)?;
    file.sync_all()?;
    let published = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match published {
        Ok(()) => Ok(key),
        // Another process published one first: use it.
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            read(path)?.with_context(|| format!("{} vanished while it was read", path.display()))
        }
        Err(err) => Err(err).with_context(|| format!("writing {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; KEY_LEN] = [7; KEY_LEN];

    fn mac(key: Option<&[u8; KEY_LEN]>, component: &blake3::Hash, payload: &[u8]) -> Vec<u8> {
        let hash = match key {
            Some(key) => keyed(key, component, payload),
            None => blake3::hash(payload),
        };
        let mut mac = MAGIC.to_vec();
        mac.extend_from_slice(hash.as_bytes());
        mac
    }

    #[test]
    fn the_mac_rejects_damage_and_forgery() {
        let ours = blake3::hash(b"our component");
        let payload = b"compiled code".to_vec();
        let good = mac(Some(&KEY), &ours, &payload);
        assert!(authentic(&KEY, &ours, &payload, &good));

        let mut flipped = payload.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(!authentic(&KEY, &ours, &flipped, &good));
        assert!(!authentic(&KEY, &ours, &payload[..5], &good));
        assert!(!authentic(&KEY, &ours, &payload, &good[..10]));
        assert!(!authentic(&KEY, &ours, &payload, &[]));
        let mut wrong_magic = good.clone();
        wrong_magic[0] = b'X';
        assert!(!authentic(&KEY, &ours, &payload, &wrong_magic));

        // Forged: a plain checksum, or one under another key.
        assert!(!authentic(
            &KEY,
            &ours,
            &payload,
            &mac(None, &ours, &payload)
        ));
        assert!(!authentic(
            &KEY,
            &ours,
            &payload,
            &mac(Some(&[8; KEY_LEN]), &ours, &payload)
        ));
        // Another component's genuine artifact and MAC, copied into this
        // component's slot.
        let theirs = blake3::hash(b"another component");
        let their_code = b"their compiled code".to_vec();
        let their_mac = mac(Some(&KEY), &theirs, &their_code);
        assert!(authentic(&KEY, &theirs, &their_code, &their_mac));
        assert!(!authentic(&KEY, &ours, &their_code, &their_mac));
    }

    #[test]
    fn the_key_is_made_once_private_and_kept() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = key_path(&dir.path().join("components"));
        assert_eq!(path, dir.path().join("components.key"));
        let key = load_or_create_key(&path).unwrap();
        assert_eq!(load_or_create_key(&path).unwrap(), key);
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create_key(&path).unwrap_err().to_string();
        assert!(err.contains("readable by others"), "{err}");
    }
}
