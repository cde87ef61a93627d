//! What a warm sandbox's root was built from, as the host's filesystem had
//! it: checked before each process it starts.
//!
//! Why: the resident process builds the root once (see `zygote.rs`), with
//! binds that name inodes, not paths. When the host replaces a protected
//! file by rename (an editor saving `.claude/settings.json`), the kernel
//! detaches the bind that covered the old file in every other mount
//! namespace: the resident's root would show the new file unprotected. A
//! root built per process never had that problem. So the host notes the
//! device, inode and type of every path the root binds, protects, hides or
//! denies, and a difference retires the spawner: later processes get a new
//! one, with a root built afresh (and the processes still running keep the
//! old one until they end).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The paths watched and what each was when the spawner started.
#[derive(Debug)]
pub(crate) struct Fingerprint {
    paths: Arc<[PathBuf]>,
    seen: Vec<Option<(u64, u64, u32)>>,
}

impl Fingerprint {
    /// Notes what `paths` are now.
    pub(crate) fn take(paths: Arc<[PathBuf]>) -> Fingerprint {
        let seen = paths.iter().map(|p| identity(p)).collect();
        Fingerprint { paths, seen }
    }

    /// The first path that is no longer what it was, if any.
    pub(crate) fn changed(&self) -> Option<&Path> {
        self.paths
            .iter()
            .zip(&self.seen)
            .find(|(path, seen)| identity(path) != **seen)
            .map(|(path, _)| path.as_path())
    }
}

/// Device, inode and file type of `path` itself (a link is not followed),
/// or `None` when there is nothing there.
fn identity(path: &Path) -> Option<(u64, u64, u32)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.dev(), meta.ino(), meta.mode() & libc::S_IFMT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaced_by_rename_or_created_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        let later = dir.path().join("later");
        std::fs::write(&kept, "a").unwrap();
        let print = Fingerprint::take(vec![kept.clone(), later.clone()].into());
        // Written in place: the same file.
        std::fs::write(&kept, "b").unwrap();
        assert_eq!(print.changed(), None);
        let new = dir.path().join("new");
        std::fs::write(&new, "c").unwrap();
        std::fs::rename(&new, &kept).unwrap();
        assert_eq!(print.changed(), Some(kept.as_path()));

        let print = Fingerprint::take(vec![kept.clone(), later.clone()].into());
        std::fs::create_dir(&later).unwrap();
        assert_eq!(print.changed(), Some(later.as_path()));
    }
}
