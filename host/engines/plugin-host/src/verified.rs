//! What the compile cache has verified before, so that a load of an
//! unchanged file neither reads nor hashes it again: one small record per
//! file, holding the file's identity (device, inode, size, modification
//! and change times) and the digest found for it, authenticated with the
//! cache's key, under the cache directory (which no plugin or program can
//! see).
//!
//! A record is only written for a file whose change time is over
//! [`SETTLED`] in the past. File times come from a coarse clock, so a file
//! changed again within the same tick could otherwise keep the recorded
//! times (git's "racily clean" problem). Any change after the record was
//! written sets a newer change time, which user space cannot set back, so
//! the record no longer matches and the file is verified anew.

use crate::atomic_write::write_atomically;
use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const MAGIC: &[u8; 8] = b"KZNVRFY1";
/// How long ago a file must have last changed for its record to be kept.
pub(crate) const SETTLED: Duration = Duration::from_secs(1);
const RECORD_LEN: usize = MAGIC.len() + 5 * 16 + 2 * blake3::OUT_LEN;

/// Who a file is, as far as the kernel tells: any change to it changes
/// this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity([i128; 5]);

impl Identity {
    fn of(meta: &fs::Metadata) -> Self {
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Self([
            i128::from(meta.dev()),
            i128::from(meta.ino()),
            i128::from(meta.size()),
            ns(meta.mtime(), meta.mtime_nsec()),
            ns(meta.ctime(), meta.ctime_nsec()),
        ])
    }

    /// Whether the file last changed over [`SETTLED`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let now = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        self.0[4] < now - SETTLED.as_nanos() as i128
    }

    fn bytes(&self) -> [u8; 5 * 16] {
        let mut out = [0u8; 5 * 16];
        for (chunk, value) in out.chunks_mut(16).zip(self.0) {
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        out
    }
}

/// The records of one cache.
#[derive(Clone)]
pub(crate) struct VerifiedFiles {
    dir: PathBuf,
    key: [u8; 32],
}

impl VerifiedFiles {
    /// Records kept in `dir`, authenticated with `key`.
    pub fn new(dir: PathBuf, key: [u8; 32]) -> Self {
        Self { dir, key }
    }

    fn record_path(&self, path: &Path) -> PathBuf {
        let name = blake3::hash(path.as_os_str().as_encoded_bytes());
        self.dir.join(name.to_hex().as_str())
    }

    /// What authenticates a record of `path` with `identity` and `digest`.
    fn mac(&self, path: &Path, identity: &Identity, digest: &blake3::Hash) -> blake3::Hash {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher.update(MAGIC);
        hasher.update(&(path.as_os_str().len() as u64).to_le_bytes());
        hasher.update(path.as_os_str().as_encoded_bytes());
        hasher.update(&identity.bytes());
        hasher.update(digest.as_bytes());
        hasher.finalize()
    }

    /// The digest recorded for `path` when the file is still the one that
    /// was verified (`meta` is its metadata now).
    pub fn lookup(&self, path: &Path, meta: &fs::Metadata) -> Option<blake3::Hash> {
        let bytes = fs::read(self.record_path(path)).ok()?;
        if bytes.len() != RECORD_LEN || &bytes[..MAGIC.len()] != MAGIC {
            return None;
        }
        let identity = Identity::of(meta);
        let at = MAGIC.len();
        if bytes[at..at + 80] != identity.bytes() {
            return None;
        }
        let digest = blake3::Hash::from_bytes(bytes[at + 80..at + 112].try_into().ok()?);
        let mac = blake3::Hash::from_bytes(bytes[at + 112..].try_into().ok()?);
        // `Hash`'s equality runs in constant time.
        (self.mac(path, &identity, &digest) == mac).then_some(digest)
    }

    /// Records that the file at `path` (with metadata `meta`, read before
    /// its content was verified) has `digest`, when it has settled; a
    /// failure to write only costs a verification next time.
    pub fn record(&self, path: &Path, meta: &fs::Metadata, digest: &blake3::Hash) {
        let identity = Identity::of(meta);
        if !identity.settled(SystemTime::now()) {
            return;
        }
        let mut record = Vec::with_capacity(RECORD_LEN);
        record.extend_from_slice(MAGIC);
        record.extend_from_slice(&identity.bytes());
        record.extend_from_slice(digest.as_bytes());
        record.extend_from_slice(self.mac(path, &identity, digest).as_bytes());
        let written = fs::create_dir_all(&self.dir)
            .and_then(|()| write_atomically(&self.dir, &self.record_path(path), &record));
        if let Err(err) = written {
            tracing::debug!("could not record {} as verified: {err}", path.display());
        }
    }
}

impl crate::pinning::Memo for VerifiedFiles {
    /// A fact is a file named by its keyed hash: only the cache's key can
    /// make the name, so nobody else can plant a fact.
    fn knows(&self, fact: &[u8]) -> bool {
        self.fact_path(fact).is_file()
    }

    fn learn(&self, fact: &[u8]) {
        let path = self.fact_path(fact);
        let written =
            fs::create_dir_all(&self.dir).and_then(|()| write_atomically(&self.dir, &path, &[]));
        if let Err(err) = written {
            tracing::debug!("could not record a verified signature: {err}");
        }
    }
}

impl VerifiedFiles {
    fn fact_path(&self, fact: &[u8]) -> PathBuf {
        let name = blake3::keyed_hash(&self.key, fact);
        self.dir.join(format!("fact-{}", name.to_hex()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file whose change time is well in the past: one made, then the
    /// clock of the record moved on (records check the time at writing).
    fn settled_file(dir: &Path) -> PathBuf {
        let path = dir.join("artifact");
        fs::write(&path, b"compiled").unwrap();
        std::thread::sleep(SETTLED + Duration::from_millis(100));
        path
    }

    #[test]
    fn a_settled_unchanged_file_is_found_and_any_change_loses_it() {
        let dir = tempfile::tempdir().unwrap();
        let files = VerifiedFiles::new(dir.path().join("verified"), [3; 32]);
        let path = settled_file(dir.path());
        let digest = blake3::hash(b"compiled");
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(files.lookup(&path, &meta), None);
        files.record(&path, &meta, &digest);
        assert_eq!(
            files.lookup(&path, &fs::metadata(&path).unwrap()),
            Some(digest)
        );

        // Another key does not accept it.
        let other = VerifiedFiles::new(dir.path().join("verified"), [4; 32]);
        assert_eq!(other.lookup(&path, &fs::metadata(&path).unwrap()), None);

        // Rewritten in place with the same size: a new change time.
        fs::write(&path, b"COMPILED").unwrap();
        assert_eq!(files.lookup(&path, &fs::metadata(&path).unwrap()), None);
        // Its times set back: the change time still moves.
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1))
            .unwrap();
        assert_eq!(files.lookup(&path, &fs::metadata(&path).unwrap()), None);
    }

    #[test]
    fn facts_are_known_once_learned_and_only_under_the_same_key() {
        use crate::pinning::Memo as _;
        let dir = tempfile::tempdir().unwrap();
        let files = VerifiedFiles::new(dir.path().join("verified"), [3; 32]);
        assert!(!files.knows(b"signed"));
        files.learn(b"signed");
        assert!(files.knows(b"signed"));
        assert!(!files.knows(b"signed!"));
        let other = VerifiedFiles::new(dir.path().join("verified"), [4; 32]);
        assert!(!other.knows(b"signed"));
    }

    #[test]
    fn a_file_that_just_changed_is_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let files = VerifiedFiles::new(dir.path().join("verified"), [3; 32]);
        let path = dir.path().join("fresh");
        fs::write(&path, b"x").unwrap();
        let meta = fs::metadata(&path).unwrap();
        files.record(&path, &meta, &blake3::hash(b"x"));
        assert_eq!(files.lookup(&path, &meta), None);
    }

    #[test]
    fn a_forged_or_damaged_record_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let files = VerifiedFiles::new(dir.path().join("verified"), [3; 32]);
        let path = settled_file(dir.path());
        let meta = fs::metadata(&path).unwrap();
        files.record(&path, &meta, &blake3::hash(b"compiled"));
        let record = files.record_path(&path);
        let mut bytes = fs::read(&record).unwrap();
        // Claim another digest without the key.
        let at = MAGIC.len() + 80;
        bytes[at] ^= 1;
        fs::write(&record, &bytes).unwrap();
        assert_eq!(files.lookup(&path, &meta), None);
        fs::write(&record, &bytes[..10]).unwrap();
        assert_eq!(files.lookup(&path, &meta), None);
    }
}
