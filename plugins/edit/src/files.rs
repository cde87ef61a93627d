//! The file a tool is about to change: finding it, the read-before-write
//! rule, and writing it back. Errors say what to do next.

use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use kaizen_sdk::ToolError;
use kaizen_sdk::paths::{self, normalize, similar_files};
use kaizen_sdk::session::{self, FileRecord, mtime_ms};

/// Files larger than this are not loaded for editing: the plugin holds a
/// few copies of the text while it works.
pub(crate) const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// What is at a path now.
pub(crate) struct Current {
    /// The content.
    pub bytes: Vec<u8>,
    /// Its fingerprint, to compare with the session's note.
    pub record: FileRecord,
}

/// `given` (the `field` of the input) as an absolute, lexically normalized
/// path: relative paths resolve against `cwd`.
pub(crate) fn resolve(cwd: &Path, given: &str, field: &str) -> Result<PathBuf, ToolError> {
    if given.trim().is_empty() {
        return Err(ToolError::invalid_input(format!(
            "`{field}` is empty. Give the absolute path of the file, e.g. \
             \"/path/to/project/src/main.rs\"."
        )));
    }
    Ok(normalize(&cwd.join(given)))
}

/// Refuses a path outside the directories this plugin was granted, with
/// the list of those it may use. Checked before anything else: the WASI
/// libc would resolve such a path inside the workspace instead.
pub(crate) fn check_granted(path: &Path, tool: &str) -> Result<(), ToolError> {
    paths::check_granted(
        path,
        "change",
        &format!(", so {tool} cannot touch it. Choose a path inside them"),
    )
}

/// The metadata of the regular file at `path`, or `None` when nothing is
/// there. Directories and devices are refused.
fn stat(path: &Path, tool: &str) -> Result<Option<Metadata>, ToolError> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(access_error(path, err, tool)),
    };
    if meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "{} is a directory, not a file; {tool} changes files only. Give the path of a file \
             (use Glob to list the files in this directory).",
            path.display()
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::invalid_input(format!(
            "{} is not a regular file (it is a device, a pipe or a socket); {tool} changes \
             regular files only.",
            path.display()
        )));
    }
    Ok(Some(meta))
}

/// The fingerprint of the file at `path`, hashed as it streams by (any
/// size), or `None` when nothing is there: what Write checks before it
/// replaces a file.
pub(crate) fn fingerprint(path: &Path, tool: &str) -> Result<Option<FileRecord>, ToolError> {
    if stat(path, tool)?.is_none() {
        return Ok(None);
    }
    session::fingerprint(path)
        .map(Some)
        .map_err(|err| access_error(path, err, tool))
}

/// The file at `path` with its fingerprint, or `None` when nothing is
/// there. Directories, devices and files too large to edit are refused.
pub(crate) fn load(path: &Path, tool: &str) -> Result<Option<Current>, ToolError> {
    let Some(meta) = stat(path, tool)? else {
        return Ok(None);
    };
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::invalid_input(format!(
            "{} is {} MB, too large for {tool} (the limit is {} MB). Change it with a program \
             made for large files instead.",
            path.display(),
            meta.len() / (1024 * 1024),
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    let bytes = fs::read(path).map_err(|err| access_error(path, err, tool))?;
    let record = FileRecord::of_bytes(&bytes, mtime_ms(&meta));
    Ok(Some(Current { bytes, record }))
}

/// The read-before-write rule: an existing file may be changed only when
/// the session read it (or wrote it) and its content is still what was
/// seen then. A model that never saw the file, or saw an older version,
/// would otherwise overwrite work it does not know about.
pub(crate) fn check_fresh(
    path: &Path,
    note: Option<&FileRecord>,
    current: &FileRecord,
    tool: &str,
) -> Result<(), ToolError> {
    let Some(note) = note else {
        return Err(ToolError::invalid_input(format!(
            "{path} has not been read in this session, so {tool} will not change it: a change \
             made without seeing the current content could destroy work. Read it first with \
             the Read tool, then call {tool} again.",
            path = path.display()
        )));
    };
    if note.same_content(current) {
        return Ok(());
    }
    let when = match current.mtime_ms.checked_sub(note.mtime_ms) {
        Some(later) if later > 0 => {
            format!(" (it was modified {} after that)", human_duration_ms(later))
        }
        _ => String::new(),
    };
    Err(ToolError::conflict(format!(
        "{path} has changed since it was last read in this session{when}: the user, a \
         formatter or another program changed it. Read it again to see its current content, \
         then call {tool} again with your change made on top of it.",
        path = path.display()
    )))
}

/// "3.2 s", "5 min", "2 h": roughly how long `ms` is.
fn human_duration_ms(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min", ms / 60_000),
        _ => format!("{} h", ms / 3_600_000),
    }
}

/// The error for a file that is not there, with close names from its
/// directory when there are some. `create` says how this tool creates a
/// file instead, if it can.
pub(crate) fn missing(path: &Path, create: &str) -> ToolError {
    if !path.parent().is_some_and(Path::is_dir) {
        return ToolError::not_found(format!(
            "File does not exist: {}. Either the path is wrong, or it is outside the \
             directories Kaizen can change (the workspace and any directories added with \
             --add-dir), which look missing from here. Check the path, or use Glob to find the \
             file by name.",
            path.display()
        ));
    }
    let similar = similar_files(path);
    let advice = if similar.is_empty() {
        "Check the path, or use Glob to find the file by name.".to_owned()
    } else {
        let list: Vec<String> = similar.iter().map(|p| p.display().to_string()).collect();
        format!("Did you mean {}?", list.join(", or "))
    };
    ToolError::not_found(format!(
        "File does not exist: {}. {advice} {create}",
        path.display()
    ))
}

/// Writes `bytes` to `path`, creating missing parent directories; the
/// fingerprint of what was written, for the session's notes.
pub(crate) fn store(path: &Path, bytes: &[u8], tool: &str) -> Result<FileRecord, ToolError> {
    if let Some(parent) = path.parent()
        && !parent.is_dir()
    {
        fs::create_dir_all(parent).map_err(|err| write_error(path, err, tool))?;
    }
    // The host keeps what the file holds now, for `kaizen rewind`. Only a
    // component has a host; the change goes ahead either way.
    #[cfg(target_arch = "wasm32")]
    if let Err(why) = session::will_change(path) {
        kaizen_sdk::log::warn(format!("{tool}: {why}"));
    }
    // In place, not through a temporary file and a rename: the file keeps
    // its permissions, owner and hard links.
    fs::write(path, bytes).map_err(|err| write_error(path, err, tool))?;
    let mtime = fs::metadata(path).map(|meta| mtime_ms(&meta)).unwrap_or(0);
    Ok(FileRecord::of_bytes(bytes, mtime))
}

/// An error reading `path`.
fn access_error(path: &Path, err: io::Error, tool: &str) -> ToolError {
    if err.kind() == io::ErrorKind::PermissionDenied {
        return ToolError::permission_denied(format!(
            "{} cannot be read: permission denied, so {tool} cannot change it. Change files in \
             the workspace or in directories added with --add-dir instead.",
            path.display()
        ));
    }
    ToolError::from(err).context(format!("cannot read {}", path.display()))
}

/// An error writing `path` (or creating its directory).
fn write_error(path: &Path, err: io::Error, tool: &str) -> ToolError {
    match err.kind() {
        // The host answers so for Kaizen's configuration in the workspace.
        io::ErrorKind::ReadOnlyFilesystem => ToolError::permission_denied(format!(
            "{} is read-only: tools may read Kaizen's configuration (kaizen.toml, and .kaizen/, \
             .claude/ and .mcp.json at the top of the workspace) but never change it, as they \
             cannot write a read-only file system. Tell the user the change to make instead.",
            path.display()
        )),
        io::ErrorKind::PermissionDenied => ToolError::permission_denied(format!(
            "{} cannot be written: permission denied. {tool} can change files only in the \
                 workspace and in directories added with --add-dir as writable; choose a path \
                 inside them.",
            path.display()
        )),
        io::ErrorKind::NotFound => ToolError::permission_denied(format!(
            "{} cannot be written: it is outside the directories Kaizen can change (the \
             workspace and any directories added with --add-dir), so its directory cannot be \
             created. Choose a path inside the workspace.",
            path.display()
        )),
        _ => ToolError::from(err).context(format!("cannot write {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(hash: &str, mtime_ms: u64) -> FileRecord {
        FileRecord {
            hash: hash.into(),
            mtime_ms,
        }
    }

    #[test]
    fn never_read_and_changed_since_read_are_told_apart() {
        let path = Path::new("/w/a.txt");
        let now = record("new", 5_000);
        let never = check_fresh(path, None, &now, "Edit").unwrap_err();
        assert!(
            never
                .message()
                .contains("has not been read in this session")
        );
        assert!(never.message().contains("Read it first"));
        let changed = check_fresh(path, Some(&record("old", 1_800)), &now, "Write").unwrap_err();
        assert_eq!(changed.kind(), kaizen_sdk::ErrorKind::Conflict);
        assert!(
            changed
                .message()
                .contains("has changed since it was last read in this session (it was modified 3.2 s after that)"),
            "{changed}"
        );
        assert!(changed.message().contains("Read it again"));
        // Touched but unchanged still counts as what was read.
        assert!(check_fresh(path, Some(&record("new", 1)), &now, "Edit").is_ok());
    }

    #[test]
    fn files_are_loaded_stored_with_their_directories_and_missing_ones_get_suggestions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/notes.md");
        assert!(load(&path, "Write").unwrap().is_none());
        let stored = store(&path, b"hi\n", "Write").unwrap();
        let current = load(&path, "Edit").unwrap().unwrap();
        assert_eq!(current.bytes, b"hi\n");
        assert_eq!(current.record, stored);
        let err = missing(&dir.path().join("deep/er/Notes.md"), "");
        assert!(err.message().contains("Did you mean"), "{err}");
        assert!(err.message().contains("deep/er/notes.md"), "{err}");
        let dir_err = load(&dir.path().join("deep"), "Edit").err().unwrap();
        assert!(dir_err.message().contains("is a directory"), "{dir_err}");
    }
}
