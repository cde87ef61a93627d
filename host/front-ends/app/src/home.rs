//! Where Kaizen keeps its state (`KAIZEN_HOME`, the compile cache, the
//! toolchains), and the check that no other user can replace it.
//!
//! Kaizen trusts what it keeps there: the user's configuration, recorded
//! workspace trust, compiled code and its key. A directory another user
//! could create first or swap for their own (anything in a shared `/tmp`
//! made without care, as `HOME=/tmp` makes the default data directory)
//! would hand them all of it. So each state directory is made private
//! when Kaizen makes it, and refused, with the fix named, when someone
//! else owns it or a directory above it, or can write one of them without
//! the sticky bit that stops them renaming what is not theirs.

use anyhow::{Context as _, bail};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `KAIZEN_HOME`, else the user's data directory, made private if missing
/// and checked (see [`private_state_dir`]).
pub fn kaizen_home() -> anyhow::Result<PathBuf> {
    let home = match std::env::var_os("KAIZEN_HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home),
        None => dirs::data_dir()
            .map(|dir| dir.join("kaizen"))
            .context("cannot find a data directory for Kaizen's state; set KAIZEN_HOME")?,
    };
    private_state_dir(&home, "KAIZEN_HOME")?;
    Ok(home)
}

/// Makes `dir` (only its owner may enter what is made) unless it exists,
/// then checks that no other user can replace it or what it holds: it and
/// every directory above it (the link-free path and any link on the way)
/// belong to the user or to root; `dir` is writable by nobody else (its
/// group only when that is the user's own group); a directory above it
/// writable by others is sticky, as `/tmp` is. `what` names it (the
/// variable that sets it) in the error.
pub fn private_state_dir(dir: &Path, what: &str) -> anyhow::Result<()> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {what} at {}", dir.display()))?;
    }
    let real = dir
        .canonicalize()
        .with_context(|| format!("resolving {what} at {}", dir.display()))?;
    let user = Who::current();
    // A link on the way is as good as the directory it names: someone who
    // owns one can point it elsewhere later.
    for step in dir.ancestors() {
        if let Ok(meta) = std::fs::symlink_metadata(step)
            && meta.file_type().is_symlink()
            && !user.may_own(&meta)
        {
            bail!(refused(
                what,
                dir,
                step,
                "is a link that belongs to another user"
            ));
        }
    }
    for (depth, step) in real.ancestors().enumerate() {
        let meta = std::fs::metadata(step)
            .with_context(|| format!("checking {what}: reading {}", step.display()))?;
        if let Some(why) = user.unsafe_because(meta.uid(), meta.gid(), meta.mode(), depth == 0) {
            bail!(refused(what, dir, step, &why));
        }
    }
    Ok(())
}

/// The user Kaizen runs as.
struct Who {
    uid: u32,
    gid: u32,
}

impl Who {
    fn current() -> Self {
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        unsafe {
            Self {
                uid: libc::geteuid(),
                gid: libc::getegid(),
            }
        }
    }

    /// Whether a file owned as `meta` says is the user's or root's.
    fn may_own(&self, meta: &std::fs::Metadata) -> bool {
        meta.uid() == self.uid || meta.uid() == 0
    }

    /// Why a directory owned by `uid` and `gid` with `mode` lets another
    /// user replace what is in it, if it does: it is theirs, or they may
    /// write it (its group only counts when it is not the user's own) and,
    /// above the state directory itself (`last` false), it is not sticky.
    fn unsafe_because(&self, uid: u32, gid: u32, mode: u32, last: bool) -> Option<String> {
        if uid != self.uid && uid != 0 {
            return Some(format!("belongs to user {uid}"));
        }
        let sticky = mode & 0o1000 != 0;
        let others_write = mode & 0o002 != 0 || (mode & 0o020 != 0 && gid != self.gid);
        (others_write && (last || !sticky)).then(|| "can be written by other users".to_string())
    }
}

/// Why `dir` is refused as `what`, because of `step`.
fn refused(what: &str, dir: &Path, step: &Path, why: &str) -> String {
    format!(
        "{what} is {}, but {} {why}: another user could replace Kaizen's state there. \
         Set {what} to a directory of your own (for example under your home, made with `mkdir -m 700`)",
        dir.display(),
        step.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_missing_home_is_made_private_even_under_a_sticky_shared_directory() {
        let root = tempfile::tempdir().unwrap();
        let shared = root.path().join("tmp");
        std::fs::create_dir(&shared).unwrap();
        chmod(&shared, 0o1777);
        let home = shared.join("me/.local/share/kaizen");
        private_state_dir(&home, "KAIZEN_HOME").unwrap();
        for dir in [shared.join("me"), home.clone()] {
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        }
        // Again, now that it exists.
        private_state_dir(&home, "KAIZEN_HOME").unwrap();
    }

    #[test]
    fn a_home_others_can_write_or_swap_is_refused_with_the_fix() {
        let root = tempfile::tempdir().unwrap();
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let err = private_state_dir(&open, "KAIZEN_HOME")
            .unwrap_err()
            .to_string();
        assert!(err.contains("can be written by other users"), "{err}");
        assert!(err.contains("Set KAIZEN_HOME"), "{err}");
        // Sticky is not enough for the home itself.
        chmod(&open, 0o1777);
        assert!(private_state_dir(&open, "KAIZEN_HOME").is_err());
        // Below a directory others may write without the sticky bit, a
        // private home can still be renamed away and replaced.
        chmod(&open, 0o777);
        let below = open.join("home");
        let err = private_state_dir(&below, "KAIZEN_HOME")
            .unwrap_err()
            .to_string();
        assert!(err.contains(&open.display().to_string()), "{err}");
    }

    #[test]
    fn a_directory_of_another_user_on_the_way_is_refused() {
        let me = Who {
            uid: 1000,
            gid: 1000,
        };
        assert_eq!(
            me.unsafe_because(4242, 1000, 0o40700, false).as_deref(),
            Some("belongs to user 4242")
        );
        assert_eq!(me.unsafe_because(0, 0, 0o41777, false), None, "/tmp");
        assert_eq!(
            me.unsafe_because(1000, 1000, 0o40775, true),
            None,
            "own group"
        );
        assert!(
            me.unsafe_because(1000, 50, 0o40775, true).is_some(),
            "a shared group"
        );
        assert!(me.unsafe_because(1000, 1000, 0o40757, false).is_some());
    }

    #[test]
    fn a_link_on_the_way_is_judged_by_the_directory_it_names() {
        let root = tempfile::tempdir().unwrap();
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        let err = private_state_dir(&link, "KAIZEN_CACHE_DIR")
            .unwrap_err()
            .to_string();
        assert!(err.contains("can be written by other users"), "{err}");
        chmod(&open, 0o700);
        private_state_dir(&link, "KAIZEN_CACHE_DIR").unwrap();
    }
}
