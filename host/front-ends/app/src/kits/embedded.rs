//! The kits' files, embedded in the binary by the build script (see
//! `build_kits.rs`): the contract under `wit/` and each language's kit and
//! project template under `sdk/`. They are packed in one zstd frame,
//! unpacked the first time a run needs their bytes (a plugin built,
//! a project made); their paths are at hand without it.

use anyhow::Context as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The embedded kits, as the build script writes them.
struct Kits {
    /// BLAKE3 over every path and its bytes, each preceded by its length:
    /// names the directory they are extracted to.
    digest: &'static str,
    /// The length of the unpacked frame.
    size: usize,
    /// Every file: its path relative to the repository, and where its
    /// bytes lie in the unpacked frame.
    files: &'static [(&'static str, usize, usize)],
    /// The frame, packed.
    packed: &'static [u8],
}

static KITS: Kits = include!(concat!(env!("OUT_DIR"), "/kits.rs"));

static UNPACKED: OnceLock<Vec<u8>> = OnceLock::new();

/// The kits' files one after another, unpacked once.
fn contents() -> anyhow::Result<&'static [u8]> {
    if let Some(contents) = UNPACKED.get() {
        return Ok(contents);
    }
    let contents = zstd::stream::decode_all(KITS.packed).context("unpacking the embedded kits")?;
    anyhow::ensure!(
        contents.len() == KITS.size,
        "the embedded kits unpack to {} bytes, not {}",
        contents.len(),
        KITS.size
    );
    // Every file lies in the frame, so `under` can slice without checking.
    anyhow::ensure!(
        KITS.files
            .iter()
            .all(|(_, start, end)| start <= end && *end <= KITS.size),
        "the embedded kits' table points outside their frame"
    );
    Ok(UNPACKED.get_or_init(|| contents))
}

/// The paths of the embedded files under `prefix` (which ends with `/`),
/// relative to it.
pub fn paths_under(prefix: &str) -> impl Iterator<Item = &'static str> + '_ {
    KITS.files
        .iter()
        .filter_map(move |(path, _, _)| path.strip_prefix(prefix))
}

/// The embedded files under `prefix` (which ends with `/`), with paths
/// relative to it.
pub fn under(
    prefix: &str,
) -> anyhow::Result<impl Iterator<Item = (&'static str, &'static [u8])> + '_> {
    let contents = contents()?;
    Ok(KITS.files.iter().filter_map(move |(path, start, end)| {
        Some((path.strip_prefix(prefix)?, &contents[*start..*end]))
    }))
}

/// The kits written out under `root` (`<root>/<digest>/wit`, `.../sdk`),
/// once per distinct set of files: a kaizen of another version gets a
/// directory of its own, and a directory once complete is never changed.
pub fn extracted(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join(&KITS.digest[..16]);
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".extracting-")
        .tempdir_in(root)
        .with_context(|| format!("creating a directory in {}", root.display()))?;
    for (path, bytes) in under("")? {
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
