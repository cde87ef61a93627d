//! Directories and files as the search reads them, with as few host calls
//! as possible.
//!
//! Inside the component, `std::fs` goes through wasi-libc, which costs
//! host calls the search does not need: every directory entry read is
//! followed by a `metadata-hash-at` call (for `d_ino`), every path is
//! resolved from its preopened directory, and a file is read in three
//! calls (a BOM sniff, the data, the end). The `wasi` backend talks to
//! `wasi:filesystem` directly instead: a directory is one
//! `read-directory` stream, files are opened relative to their directory
//! descriptor, and a file is one `stat` (its size and modification time)
//! and, up to 64 KiB, one `read`. The `native` backend (`std::fs`) serves
//! the unit tests.

use std::time::SystemTime;

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod wasi;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub(crate) use wasi::{Dir, Fs};

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
mod native;
#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
pub(crate) use native::{Dir, Fs};

/// Most bytes one read returns (the host's cap on a `read`), and how much
/// of a file binary detection looks at (as the searcher does).
pub(crate) const CHUNK: usize = 64 * 1024;

/// Files larger than this are searched as a stream rather than read whole.
pub(crate) const MAX_IN_MEMORY: u64 = 8 << 20;

/// What a directory entry is (symbolic links are not followed, as `rg`
/// does not follow them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Anything else (symbolic link, device, socket, ...).
    Other,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: Kind,
}

/// What reading a file found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Contents {
    /// The whole file is in the buffer.
    Text,
    /// Its first 64 KiB hold a NUL byte: binary, not read further.
    Binary,
    /// Larger than [`MAX_IN_MEMORY`]: not read; search it as a stream.
    Large,
}

/// A file that was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct File {
    /// What was read.
    pub contents: Contents,
    /// Its modification time (the epoch when unknown).
    pub modified: SystemTime,
}

/// Whether `first`, a file's first bytes, mark it binary the way `rg`
/// decides: a NUL byte, unless a UTF-16 byte-order mark says the NULs are
/// text (the searcher transcodes such files).
pub(crate) fn looks_binary(first: &[u8]) -> bool {
    let first = &first[..first.len().min(CHUNK)];
    !(first.starts_with(b"\xFF\xFE") || first.starts_with(b"\xFE\xFF"))
        && memchr::memchr(0, first).is_some()
}
