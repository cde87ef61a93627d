//! Host-side files in a directory the sandbox can also write.
//!
//! Shell state files and long scripts live in the session's private
//! directory, which sandboxed processes may modify: they could swap a file
//! for a symlink to a host file (and have the host write or read it), for a
//! FIFO (and hang the host), or swap the directory itself for a symlink. So
//! the host never follows a path there: it holds the directory open, creates
//! files with `O_EXCL | O_NOFOLLOW` under random names (or leaves a random
//! name for the sandbox to create), and reads them only if they are still
//! regular files.

use std::collections::hash_map::RandomState;
use std::ffi::CString;
use std::fs::File;
use std::hash::BuildHasher;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// State files are small; anything bigger is not ours.
const MAX_READ: u64 = 16 << 20;

/// The directory, held open.
#[derive(Debug)]
pub(crate) struct StateDir {
    path: PathBuf,
    fd: OwnedFd,
    counter: AtomicU64,
    random: RandomState,
}

/// A file made by [`StateDir::create`] or named by [`StateDir::reserve`];
/// removed when dropped.
#[derive(Debug)]
pub(crate) struct StateFile {
    dir: Arc<StateDir>,
    name: CString,
    path: PathBuf,
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

impl StateDir {
    /// Opens an existing directory.
    pub(crate) fn open(path: &Path) -> io::Result<Arc<StateDir>> {
        let cpath = CString::new(path.as_os_str().as_bytes())?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: open on a NUL-terminated path; the fd is owned below.
        let fd = cvt(unsafe { libc::open(cpath.as_ptr(), flags) })?;
        Ok(Arc::new(StateDir {
            path: path.to_path_buf(),
            // SAFETY: fd was just opened and is owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            counter: AtomicU64::new(0),
            random: RandomState::new(),
        }))
    }

    /// A random name `<kind>-<random>`, free at this moment, for a file the
    /// sandbox creates: the host only reads it (if it is then a regular
    /// file) and removes it.
    ///
    /// Why not [`StateDir::create`] for a shell's state: a program that
    /// truncates an existing file makes ext4 write its data out when it is
    /// closed (the `auto_da_alloc` heuristic), and removing the file then
    /// frees real blocks; together about 3 ms per shell call on a disk-backed
    /// `/tmp`. A file the shell creates itself is never truncated.
    pub(crate) fn reserve(self: &Arc<Self>, kind: &str) -> io::Result<StateFile> {
        for _ in 0..16 {
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            let name = format!("{kind}-{:016x}", self.random.hash_one(n));
            let cname = CString::new(name.clone())?;
            let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: fstatat relative to our directory fd, into `stat`.
            let rc = unsafe {
                libc::fstatat(
                    self.fd.as_raw_fd(),
                    cname.as_ptr(),
                    stat.as_mut_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            let err = io::Error::last_os_error();
            if rc == 0 {
                // A name the sandbox guessed and took is skipped.
                continue;
            }
            if err.raw_os_error() != Some(libc::ENOENT) {
                return Err(err);
            }
            return Ok(StateFile {
                dir: self.clone(),
                name: cname,
                path: self.path.join(name),
            });
        }
        Err(io::Error::from(io::ErrorKind::AlreadyExists))
    }

    /// Creates a new file holding `contents`, named `<kind>-<random>`.
    pub(crate) fn create(self: &Arc<Self>, kind: &str, contents: &[u8]) -> io::Result<StateFile> {
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        // A name the sandbox guessed and took is skipped, not reused.
        for _ in 0..16 {
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            let name = format!("{kind}-{:016x}", self.random.hash_one(n));
            let cname = CString::new(name.clone())?;
            // SAFETY: openat relative to our directory fd.
            match cvt(unsafe { libc::openat(self.fd.as_raw_fd(), cname.as_ptr(), flags, 0o600) }) {
                Ok(fd) => {
                    // SAFETY: fd was just opened and is owned by nobody else.
                    let mut file = unsafe { File::from_raw_fd(fd) };
                    let file_ref = StateFile {
                        dir: self.clone(),
                        name: cname,
                        path: self.path.join(name),
                    };
                    file.write_all(contents)?;
                    return Ok(file_ref);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }
}

impl StateFile {
    /// The path as processes see it.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The contents, if the file is still a regular file of sane size.
    pub(crate) fn read(&self) -> Option<Vec<u8>> {
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        // SAFETY: openat relative to our directory fd.
        let fd = cvt(unsafe { libc::openat(self.dir.fd.as_raw_fd(), self.name.as_ptr(), flags) })
            .ok()?;
        // SAFETY: fd was just opened and is owned by nobody else.
        let file = unsafe { File::from_raw_fd(fd) };
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > MAX_READ {
            return None;
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_READ).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        // unlinkat removes whatever is there now (a link, not its target).
        // SAFETY: unlinkat relative to our directory fd.
        unsafe { libc::unlinkat(self.dir.fd.as_raw_fd(), self.name.as_ptr(), 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_created_read_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(tmp.path()).unwrap();
        let file = dir.create("state", b"abc").unwrap();
        assert!(file.path().starts_with(tmp.path()));
        assert_eq!(file.read().unwrap(), b"abc");
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn a_reserved_name_is_free_read_once_made_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(tmp.path()).unwrap();
        let file = dir.reserve("state").unwrap();
        assert!(!file.path().exists());
        assert_eq!(file.read(), None);
        std::fs::write(file.path(), b"xyz").unwrap();
        assert_eq!(file.read().unwrap(), b"xyz");
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn planted_links_and_fifos_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target");
        std::fs::write(&target, "host file").unwrap();
        let dir = StateDir::open(tmp.path()).unwrap();
        let file = dir.create("state", b"").unwrap();
        std::fs::remove_file(file.path()).unwrap();
        std::os::unix::fs::symlink(&target, file.path()).unwrap();
        assert_eq!(file.read(), None);
        let path = file.path().to_path_buf();
        drop(file);
        assert!(path.symlink_metadata().is_err() && target.exists());
        let file = dir.create("state", b"").unwrap();
        std::fs::remove_file(file.path()).unwrap();
        let cpath = CString::new(file.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(cpath.as_ptr(), 0o600) }, 0);
        assert_eq!(file.read(), None);
    }
}
