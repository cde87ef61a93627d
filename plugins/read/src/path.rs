//! Finding the file: resolving the path the model gave, and saying what
//! to do when nothing is there.

use kaizen_sdk::paths::{self, normalize, similar_files};
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use kaizen_sdk::ToolError;

/// `file_path` as an absolute, lexically normalized path: relative paths
/// resolve against `cwd`.
pub(crate) fn resolve(cwd: &Path, file_path: &str) -> Result<PathBuf, ToolError> {
    if file_path.trim().is_empty() {
        return Err(ToolError::invalid_input(
            "`file_path` is empty. Give the absolute path of the file to read, e.g. \
             \"/path/to/project/src/main.rs\".",
        ));
    }
    Ok(normalize(&cwd.join(file_path)))
}

/// Refuses a path outside the directories this plugin was granted, naming
/// them. The WASI libc would otherwise resolve it inside the workspace
/// (`/etc/passwd` as `<workspace>/etc/passwd`).
pub(crate) fn check_granted(path: &Path) -> Result<(), ToolError> {
    paths::check_granted(path, "read", ". Read files inside them")
}

/// The metadata of `path` (which the model gave as `given`), or an error
/// telling the model why it cannot be read and what to try instead.
pub(crate) fn stat(cwd: &Path, given: &str, path: &Path) -> Result<Metadata, ToolError> {
    match fs::metadata(path) {
        Ok(meta) => Ok(meta),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Err(not_found(cwd, given, path)),
        Err(err) if err.kind() == io::ErrorKind::NotADirectory => {
            Err(ToolError::not_found(format!(
                "{} does not exist: a component of the path is a file, not a directory. Check \
                 the path; use Glob to find files by name.",
                path.display()
            )))
        }
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            Err(ToolError::permission_denied(format!(
                "{} cannot be read: permission denied. Read can only open files in the \
                 workspace and the directories added to it.",
                path.display()
            )))
        }
        Err(err) => Err(ToolError::from(err).context(path.display())),
    }
}

/// The error for a path that does not exist: with close names from the
/// same directory when there are some, and a hint that the sandbox hides
/// everything outside the granted directories when the directory itself
/// cannot be seen.
fn not_found(cwd: &Path, given: &str, path: &Path) -> ToolError {
    let relative = if Path::new(given).is_absolute() {
        String::new()
    } else {
        format!(
            " (`{given}` was resolved against the current working directory, {}; pass an \
             absolute path)",
            cwd.display()
        )
    };
    if !path.parent().is_some_and(Path::is_dir) {
        return ToolError::not_found(format!(
            "File does not exist: {}{relative}. Either the path is wrong, or it is outside the \
             directories Kaizen can read (the workspace and any directories added with \
             --add-dir), which look missing from here. Check the path, or use Glob to find the \
             file by name.",
            path.display()
        ));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let similar = similar_files(path);
    let advice = if similar.is_empty() {
        format!("Use Glob to find it by name (e.g. pattern \"**/{name}\"), or check the path.")
    } else {
        let list: Vec<String> = similar.iter().map(|p| p.display().to_string()).collect();
        format!("Did you mean {}?", list.join(", or "))
    };
    ToolError::not_found(format!(
        "File does not exist: {}{relative}. {advice}",
        path.display()
    ))
}
