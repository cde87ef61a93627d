//! The kits' files, embedded in the binary by the build script (see
//! `build_kits.rs`): the contract under `wit/` and each language's kit and
//! project template under `sdk/`.

use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// Every embedded file: its path relative to the repository, its bytes.
static FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/kits.rs"));

/// The embedded files under `prefix` (which ends with `/`), with paths
/// relative to it.
pub fn under(prefix: &str) -> impl Iterator<Item = (&'static str, &'static [u8])> + '_ {
    FILES
        .iter()
        .filter_map(move |(path, bytes)| Some((path.strip_prefix(prefix)?, *bytes)))
}

/// The kits written out under `root` (`<root>/<digest>/wit`, `.../sdk`),
/// once per distinct set of files: a kaizen of another version gets a
/// directory of its own, and a directory once complete is never changed.
pub fn extracted(root: &Path) -> anyhow::Result<PathBuf> {
    let mut hasher = blake3::Hasher::new();
    for (path, bytes) in FILES {
        hasher.update(&(path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    let digest = hasher.finalize().to_hex();
    let dir = root.join(&digest[..16]);
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".extracting-")
        .tempdir_in(root)
        .with_context(|| format!("creating a directory in {}", root.display()))?;
    for (path, bytes) in FILES {
        let file = staging.path().join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&file, bytes).with_context(|| format!("writing {}", file.display()))?;
    }
    match std::fs::rename(staging.path(), &dir) {
        Ok(()) => {
            // Renamed away: nothing left for the guard to delete.
            let _ = staging.keep();
            Ok(dir)
        }
        // Another kaizen extracted the same files first.
        Err(_) if dir.is_dir() => Ok(dir),
        Err(err) => Err(err).with_context(|| format!("moving the kits into {}", dir.display())),
    }
}
