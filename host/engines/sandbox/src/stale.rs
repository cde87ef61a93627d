//! Private temp directories left behind by a host that was killed: each
//! records its owner (pid and process start time), and the first sandbox a
//! host creates removes the directories whose owner is gone.

use std::path::Path;
use std::sync::Once;

/// Prefix of every sandbox's private directory under the system temp dir.
pub(crate) const PREFIX: &str = "kaizen-sandbox-";
/// The file in a private directory naming the process that owns it.
const OWNER: &str = "owner";

/// Records this process as the owner of `root`.
pub(crate) fn mark_owner(root: &Path) -> std::io::Result<()> {
    let me = std::process::id();
    let started = start_time(me).unwrap_or_default();
    std::fs::write(root.join(OWNER), format!("{me} {started}\n"))
}

/// Once per process: removes the private directories under `parent` whose
/// owner no longer runs. Directories without a readable owner are left, so
/// this runs beside the session's start, on a thread of its own: a system
/// temp directory of thousands of entries takes milliseconds to read.
pub(crate) fn sweep_once(parent: &Path) {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| {
        let owned = parent.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("kaizen-sweep".into())
            .spawn(move || sweep(&owned));
        if spawned.is_err() {
            sweep(parent);
        }
    });
}

/// Removes the stale private directories under `parent`.
pub(crate) fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let dir = entry.path();
        if owner_is_gone(&dir) {
            // remove_dir_all does not follow symlinks a sandboxed process
            // may have planted. A failure leaves it for the next host.
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

fn owner_is_gone(dir: &Path) -> bool {
    let owner = dir.join(OWNER);
    // The directory was writable by its sandbox: trust only a plain file.
    let plain = std::fs::symlink_metadata(&owner).is_ok_and(|m| m.file_type().is_file());
    if !plain {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(&owner) else {
        return false;
    };
    let mut fields = text.split_whitespace();
    let (Some(Ok(pid)), Some(Ok(started))) = (
        fields.next().map(str::parse::<u32>),
        fields.next().map(str::parse::<u64>),
    ) else {
        return false;
    };
    // A pid in use by a process started at another time is a reused pid.
    start_time(pid) != Some(started)
}

/// The start time of process `pid` (clock ticks since boot), if it runs.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22; the command name (field 2) may hold spaces and parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "a test starts its own helper processes"
)]
mod tests {
    use super::*;

    #[test]
    fn directories_of_dead_owners_go_and_the_rest_stay() {
        let parent = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let path = parent.path().join(format!("{PREFIX}{name}"));
            std::fs::create_dir(&path).unwrap();
            path
        };
        let mine = dir("mine");
        mark_owner(&mine).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = child.id();
        child.wait().unwrap();
        let dead = dir("dead");
        std::fs::write(dead.join(OWNER), format!("{dead_pid} 1\n")).unwrap();
        std::fs::write(dead.join("file"), "x").unwrap();
        let reused = dir("reused");
        let me = std::process::id();
        std::fs::write(reused.join(OWNER), format!("{me} 1\n")).unwrap();
        let unmarked = dir("unmarked");
        let other = parent.path().join("unrelated");
        std::fs::create_dir(&other).unwrap();

        sweep(parent.path());

        assert!(mine.exists(), "a live owner's directory stays");
        assert!(!dead.exists(), "a dead owner's directory goes");
        assert!(!reused.exists(), "a reused pid does not keep a directory");
        assert!(unmarked.exists(), "no owner file: left alone");
        assert!(other.exists(), "other directories are not touched");
    }
}
