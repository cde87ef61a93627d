//! Reading and writing the user's files on a tool's behalf, beneath the
//! directory the tool was allowed to write and nowhere else.
//!
//! A path checked once and used later can point elsewhere by then: a
//! session can replace a directory on the way with a symbolic link to
//! `~/.ssh`. So every access here goes through a handle on the granted
//! directory ([`cap_std::fs::Dir`]), which resolves each path component
//! beneath it and refuses any that leads out, whatever the path looked
//! like when it was checked.

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, Permissions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

/// A directory the host may touch files beneath.
pub(crate) struct Beneath {
    dir: Dir,
    root: PathBuf,
}

impl Beneath {
    /// The directory `root` (absolute).
    pub fn open(root: &Path) -> io::Result<Self> {
        Ok(Self {
            dir: Dir::open_ambient_dir(root, ambient_authority())?,
            root: root.to_path_buf(),
        })
    }

    /// `path` relative to the root: it must be absolute, start with the
    /// root, and hold no `..`.
    fn relative<'p>(&self, path: &'p Path) -> io::Result<&'p Path> {
        let outside = || {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not inside {}, the directory it was kept under",
                    path.display(),
                    self.root.display()
                ),
            )
        };
        let rel = path.strip_prefix(&self.root).map_err(|_| outside())?;
        if rel.as_os_str().is_empty()
            || rel.components().any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(outside());
        }
        Ok(rel)
    }

    /// The content of `path`, or `None` when it does not exist.
    pub fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        let rel = self.relative(path)?;
        match self.dir.open(rel) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)?;
                Ok(Some(bytes))
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Replaces `path` with `bytes` (creating its directories), keeping its
    /// permissions when it existed: a temporary file beside it, fsynced,
    /// renamed over it.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let rel = self.relative(path)?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        if !parent.as_os_str().is_empty() {
            self.dir.create_dir_all(parent)?;
        }
        let permissions: Option<Permissions> = self.dir.metadata(rel).ok().map(|m| m.permissions());
        let name = rel.file_name().unwrap_or_default().to_string_lossy();
        let temp = parent.join(format!(".{name}.kaizen-rewind-{}", std::process::id()));
        let written = (|| {
            let mut file = self
                .dir
                .open_with(&temp, OpenOptions::new().write(true).create_new(true))?;
            file.write_all(bytes)?;
            file.sync_all()?;
            if let Some(permissions) = permissions {
                file.set_permissions(permissions)?;
            }
            self.dir.rename(&temp, &self.dir, rel)
        })();
        if written.is_err() {
            let _ = self.dir.remove_file(&temp);
        }
        written
    }

    /// Removes `path`; one that is already gone is not an error.
    pub fn remove(&self, path: &Path) -> io::Result<()> {
        let rel = self.relative(path)?;
        match self.dir.remove_file(rel) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_directory_swapped_for_a_link_out_is_refused() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("sub/f"), "mine").unwrap();
        let beneath = Beneath::open(&root).unwrap();
        assert_eq!(beneath.read(&root.join("sub/f")).unwrap().unwrap(), b"mine");

        fs::remove_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
        fs::write(outside.path().join("f"), "secret").unwrap();
        assert!(beneath.read(&root.join("sub/f")).is_err());
        assert!(beneath.write(&root.join("sub/f"), b"evil").is_err());
        assert!(beneath.remove(&root.join("sub/f")).is_err());
        assert_eq!(fs::read(outside.path().join("f")).unwrap(), b"secret");
        for bad in ["/etc/passwd", "sub/../../x"] {
            assert!(beneath.write(&root.join(bad), b"x").is_err(), "{bad}");
        }
    }

    #[test]
    fn writes_are_whole_and_keep_the_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let beneath = Beneath::open(&root).unwrap();
        let file = root.join("a/b/script.sh");
        beneath.write(&file, b"#!/bin/sh\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o750)).unwrap();
        beneath.write(&file, b"#!/bin/sh\necho\n").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"#!/bin/sh\necho\n");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o750
        );
        beneath.remove(&file).unwrap();
        beneath.remove(&file).unwrap();
        assert!(!file.exists());
        assert_eq!(beneath.read(&file).unwrap(), None);
    }
}
