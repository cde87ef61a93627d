//! Files written whole or not at all, for the compile cache, its
//! verification records and `plugins.lock`.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` in `dir` whole or not at all: a temp file,
/// fsync, rename.
pub(crate) fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = tempfile_name(dir, ".tmp");
    let written = fs::File::create(&tmp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    written
        .and_then(|()| fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
}

/// A fresh name in `dir` for a temporary file starting with `prefix`.
pub(crate) fn tempfile_name(dir: &Path, prefix: &str) -> PathBuf {
    dir.join(format!(
        "{prefix}-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ))
}
