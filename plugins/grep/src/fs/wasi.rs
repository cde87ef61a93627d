//! The `wasi:filesystem` backend, for the component.

use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

use super::{CHUNK, Contents, Entry, File, Kind, MAX_IN_MEMORY, looks_binary};

/// The preopened directories: the only way in.
pub(crate) struct Fs {
    preopens: Vec<(Descriptor, String)>,
}

impl Fs {
    /// The directories the host preopened for this instance.
    pub(crate) fn new() -> Self {
        Self {
            preopens: get_directories(),
        }
    }

    /// Opens the directory at the absolute `path`, relative to the
    /// preopened directory that holds it (the longest that does).
    pub(crate) fn open_dir(&self, path: &Path) -> io::Result<Dir> {
        let (preopen, relative) = self
            .preopens
            .iter()
            .filter(|(_, guest)| guest.starts_with('/'))
            .filter_map(|(desc, guest)| Some((desc, path.strip_prefix(guest).ok()?)))
            .min_by_key(|(_, relative)| relative.as_os_str().len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "outside the preopens"))?;
        let relative = match relative.to_str() {
            Some("") => ".",
            Some(relative) => relative,
            None => return Err(io::Error::new(io::ErrorKind::InvalidData, "non-UTF-8 path")),
        };
        let desc = preopen
            .open_at(
                PathFlags::SYMLINK_FOLLOW,
                relative,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        Ok(Dir { desc })
    }
}

/// An open directory.
pub(crate) struct Dir {
    desc: Descriptor,
}

impl Dir {
    /// Appends the directory's entries to `out`.
    pub(crate) fn entries(&self, out: &mut Vec<Entry>) -> io::Result<()> {
        let stream = self.desc.read_directory().map_err(error)?;
        while let Some(entry) = stream.read_directory_entry().map_err(error)? {
            let kind = match entry.type_ {
                DescriptorType::RegularFile => Kind::File,
                DescriptorType::Directory => Kind::Dir,
                _ => Kind::Other,
            };
            out.push(Entry {
                name: entry.name,
                kind,
            });
        }
        Ok(())
    }

    /// Opens the subdirectory `name` (not following symbolic links).
    pub(crate) fn open_dir(&self, name: &str) -> io::Result<Dir> {
        let desc = self
            .desc
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        Ok(Dir { desc })
    }

    /// Reads the file `name` into `buf` (replacing what it held), stopping
    /// after the first 64 KiB when `quit_on_binary` and they look binary.
    ///
    /// One `stat` gives the size, so a file of up to 64 KiB takes a single
    /// `read`, whose buffer becomes `buf` without a copy.
    pub(crate) fn read_file(
        &self,
        name: &str,
        buf: &mut Vec<u8>,
        quit_on_binary: bool,
    ) -> io::Result<File> {
        let file = self
            .desc
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        let stat = file.stat().map_err(error)?;
        let modified = stat
            .data_modification_timestamp
            .map_or(SystemTime::UNIX_EPOCH, |t| {
                SystemTime::UNIX_EPOCH + Duration::new(t.seconds, t.nanoseconds)
            });
        let done = |contents| Ok(File { contents, modified });
        if stat.size > MAX_IN_MEMORY {
            return done(Contents::Large);
        }
        let size = stat.size as usize;
        buf.clear();
        if size == 0 {
            return done(Contents::Text);
        }
        let (first, _) = file.read(size.min(CHUNK) as u64, 0).map_err(error)?;
        // A file read in one go is left to the searcher's own binary
        // detection (which looks at the same first 64 KiB).
        if quit_on_binary && size > CHUNK && looks_binary(&first) {
            return done(Contents::Binary);
        }
        if first.len() >= size || first.is_empty() {
            *buf = first;
            return done(Contents::Text);
        }
        buf.reserve(size);
        buf.extend_from_slice(&first);
        while buf.len() < size {
            let want = (size - buf.len()).min(CHUNK) as u64;
            let (chunk, end) = file.read(want, buf.len() as u64).map_err(error)?;
            buf.extend_from_slice(&chunk);
            if chunk.is_empty() || end {
                break;
            }
        }
        done(Contents::Text)
    }
}

/// `code` as an `io::Error` of the matching kind.
fn error(code: ErrorCode) -> io::Error {
    let kind = match code {
        ErrorCode::NoEntry => io::ErrorKind::NotFound,
        ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
        ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, code.name())
}
