//! Finding the file: resolving the path the model gave, and saying what
//! to do when nothing is there.

use kaizen_sdk::paths::normalize;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use kaizen_sdk::ToolError;

/// At most this many close names are suggested for a missing file.
const MAX_SUGGESTIONS: usize = 3;

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
    let Some(dir) = path.parent().filter(|dir| dir.is_dir()) else {
        return ToolError::not_found(format!(
            "File does not exist: {}{relative}. Either the path is wrong, or it is outside the \
             directories Kaizen can read (the workspace and any directories added with \
             --add-dir), which look missing from here. Check the path, or use Glob to find the \
             file by name.",
            path.display()
        ));
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_ok_and(|t| !t.is_dir()))
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let similar = similar_names(&name, &names);
    let advice = if similar.is_empty() {
        format!("Use Glob to find it by name (e.g. pattern \"**/{name}\"), or check the path.")
    } else {
        let list: Vec<String> = similar
            .iter()
            .map(|similar| dir.join(similar).display().to_string())
            .collect();
        format!("Did you mean {}?", list.join(", or "))
    };
    ToolError::not_found(format!(
        "File does not exist: {}{relative}. {advice}",
        path.display()
    ))
}

/// Up to [`MAX_SUGGESTIONS`] of `names` that are close to `name`: the
/// same name in another case first, then the same stem with another
/// extension (`config.yml` for `config.yaml`, `README.md` for `README`),
/// each group sorted.
pub(crate) fn similar_names<'a>(name: &str, names: &'a [String]) -> Vec<&'a str> {
    let lower = name.to_lowercase();
    let stem = stem(&lower);
    let mut same_case: Vec<&str> = Vec::new();
    let mut same_stem: Vec<&str> = Vec::new();
    for candidate in names {
        let candidate_lower = candidate.to_lowercase();
        if candidate == name {
            continue;
        }
        if candidate_lower == lower {
            same_case.push(candidate);
        } else if !stem.is_empty() && self::stem(&candidate_lower) == stem {
            same_stem.push(candidate);
        }
    }
    same_case.sort_unstable();
    same_stem.sort_unstable();
    same_case
        .into_iter()
        .chain(same_stem)
        .take(MAX_SUGGESTIONS)
        .collect()
}

/// A file name without its last extension (`a.tar.gz` → `a.tar`); a
/// leading dot does not start an extension (`.bashrc` stays).
fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    }
}
