//! Paths as the sandbox sees them, and close names for a path that is
//! not there.

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::ToolError;

/// At most this many close names are suggested for a missing file.
const MAX_SUGGESTIONS: usize = 3;

/// `path` without `.` components and with `..` applied, lexically. The
/// sandbox resolves paths below its preopened directories and refuses `..`
/// that would climb out of one, so a tool resolves them itself first:
/// `/ws/src/../README.md` becomes `/ws/README.md`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !path.is_absolute() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The directories this plugin was granted (its preopened directories),
/// as absolute paths. On a native target (a plugin's unit tests) it is
/// `/`: everything.
///
/// A tool should check a path against them before it touches it: the
/// host also preopens the working directory as `.` so that relative paths
/// work, and the WASI libc resolves an absolute path that no granted
/// directory covers against that `.`, i.e. *inside the workspace*
/// (`/etc/passwd` would name `<workspace>/etc/passwd`).
pub fn granted_dirs() -> Vec<PathBuf> {
    #[cfg(target_os = "wasi")]
    {
        wasip2::filesystem::preopens::get_directories()
            .into_iter()
            .map(|(_, path)| PathBuf::from(path))
            .filter(|path| path.is_absolute())
            .collect()
    }
    #[cfg(not(target_os = "wasi"))]
    {
        vec![PathBuf::from("/")]
    }
}

/// Whether the absolute, normalized `path` lies in one of `dirs` (from
/// [`granted_dirs`]).
pub fn is_within(path: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|dir| path.starts_with(dir))
}

/// Refuses the absolute, normalized `path` when none of the
/// [`granted_dirs`] covers it, with an error naming them: "`<path>` is
/// outside the directories Kaizen can `<can>` (`<dirs>`)`<advice>`; the
/// user can grant another directory with --add-dir." `advice` starts with
/// its own punctuation (`". Read files inside them"`).
///
/// Check before touching the path: the WASI libc would resolve it inside
/// the workspace instead (see [`granted_dirs`]).
pub fn check_granted(path: &Path, can: &str, advice: &str) -> Result<(), ToolError> {
    let dirs = granted_dirs();
    if is_within(path, &dirs) {
        return Ok(());
    }
    let list: Vec<String> = dirs.iter().map(|dir| dir.display().to_string()).collect();
    Err(ToolError::permission_denied(format!(
        "{} is outside the directories Kaizen can {can} ({}){advice}; the user can grant \
         another directory with --add-dir.",
        path.display(),
        list.join(", ")
    )))
}

/// Files in the directory of `path` whose names are close to its name
/// (see [`similar_names`]), as full paths: what to suggest when `path` does
/// not exist. Empty when the directory cannot be listed.
pub fn similar_files(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_ok_and(|t| !t.is_dir()))
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    similar_names(&name.to_string_lossy(), &names)
        .into_iter()
        .map(|similar| dir.join(similar))
        .collect()
}

/// Up to three of `names` that are close to `name`: the same name in
/// another case first, then the same stem with another extension
/// (`config.yml` for `config.yaml`, `README.md` for `README`), each group
/// sorted.
pub fn similar_names<'a>(name: &str, names: &'a [String]) -> Vec<&'a str> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/a/../../b")), Path::new("/b"));
        assert_eq!(normalize(Path::new("/a/b/")), Path::new("/a/b"));
        assert_eq!(normalize(Path::new("../x")), Path::new("../x"));
    }

    #[test]
    fn paths_outside_the_granted_directories_are_refused_naming_them() {
        // Natively everything below `/` is granted.
        assert!(check_granted(Path::new("/etc/passwd"), "read", ". Advice").is_ok());
        let err = check_granted(Path::new("etc/passwd"), "read", ". Read inside them").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::PermissionDenied);
        assert_eq!(
            err.message(),
            "etc/passwd is outside the directories Kaizen can read (/). Read inside them; the \
             user can grant another directory with --add-dir."
        );
    }

    #[test]
    fn similar_names_are_case_matches_then_same_stems_at_most_three() {
        let names: Vec<String> = [
            "README.md",
            "readme",
            "README.txt",
            "README.rst",
            "Readme.md",
            "x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            similar_names("readme.md", &names),
            ["README.md", "Readme.md", "README.rst"]
        );
        assert_eq!(similar_names("main.rs", &names), Vec::<&str>::new());
    }
}
