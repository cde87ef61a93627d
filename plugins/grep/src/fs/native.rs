//! The `std::fs` backend, for native builds (the unit tests).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{CHUNK, Contents, Entry, File, Kind, MAX_IN_MEMORY, looks_binary};

/// The file system.
#[derive(Debug, Default)]
pub(crate) struct Fs;

impl Fs {
    /// The file system as this process sees it.
    pub(crate) fn new() -> Self {
        Self
    }

    /// Opens the directory at the absolute `path`.
    pub(crate) fn open_dir(&self, path: &Path) -> io::Result<Dir> {
        if fs::metadata(path)?.is_dir() {
            Ok(Dir {
                path: path.to_path_buf(),
            })
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ))
        }
    }
}

/// An open directory.
#[derive(Debug)]
pub(crate) struct Dir {
    path: PathBuf,
}

impl Dir {
    /// Appends the directory's entries to `out`.
    pub(crate) fn entries(&self, out: &mut Vec<Entry>) -> io::Result<()> {
        for entry in fs::read_dir(&self.path)? {
            let entry = entry?;
            let kind = match entry.file_type()? {
                t if t.is_file() => Kind::File,
                t if t.is_dir() => Kind::Dir,
                _ => Kind::Other,
            };
            out.push(Entry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
            });
        }
        Ok(())
    }

    /// Opens the subdirectory `name`.
    pub(crate) fn open_dir(&self, name: &str) -> io::Result<Dir> {
        Ok(Dir {
            path: self.path.join(name),
        })
    }

    /// Reads the file `name` into `buf` (replacing what it held), stopping
    /// after the first 64 KiB when `quit_on_binary` and they look binary.
    pub(crate) fn read_file(
        &self,
        name: &str,
        buf: &mut Vec<u8>,
        quit_on_binary: bool,
    ) -> io::Result<File> {
        let mut file = fs::File::open(self.path.join(name))?;
        let meta = file.metadata()?;
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if meta.len() > MAX_IN_MEMORY {
            return Ok(File {
                contents: Contents::Large,
                modified,
            });
        }
        buf.clear();
        (&mut file).take(CHUNK as u64).read_to_end(buf)?;
        if quit_on_binary && meta.len() > CHUNK as u64 && looks_binary(buf) {
            return Ok(File {
                contents: Contents::Binary,
                modified,
            });
        }
        file.read_to_end(buf)?;
        Ok(File {
            contents: Contents::Text,
            modified,
        })
    }
}
