//! Paths as the sandbox sees them.

use std::path::{Component, Path, PathBuf};

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
}
