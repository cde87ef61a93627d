//! Directories of installed tools under the target directory: built once,
//! reused by later runs while they hold what is wanted.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `root/<name>`, made by `build` the first time (or when `wanted`, a
/// description of its contents, changed) and reused after, once
/// `root/<name>/<ready>` exists. Several tests may ask at once: each
/// builds in a directory of its own and the first to finish wins the
/// name, through a link (installed tools often name their own path, so
/// the build directory stays where it was built).
pub(crate) fn built_once(
    root: &Path,
    name: &str,
    wanted: &str,
    ready: &str,
    build: impl FnOnce(&Path),
) -> PathBuf {
    // One build at a time in this process; other processes build in
    // directories of their own.
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = root.join(name);
    let marker = dir.join(".kaizen-packages");
    if std::fs::read_to_string(&marker).is_ok_and(|have| have == wanted) && dir.join(ready).exists()
    {
        return dir;
    }
    let building = root.join(format!("{name}.building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(root).expect("creating the tools' root");
    build(&building);
    std::fs::write(building.join(".kaizen-packages"), wanted).expect("writing the marker");
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&dir).expect("removing an old build"),
        Ok(_) => std::fs::remove_file(&dir).expect("removing an old link"),
        Err(_) => {}
    }
    if std::os::unix::fs::symlink(&building, &dir).is_err() {
        // Another test got there first; its build is as good.
        assert!(dir.join(ready).exists(), "cannot make {}", dir.display());
        let _ = std::fs::remove_dir_all(&building);
    }
    dir
}

/// Runs `cmd`, panicking with `what` and its output when it fails.
pub(crate) fn run(cmd: &mut Command, what: &str) {
    if let Some(failure) = failure_of(cmd, what) {
        panic!("{what} failed: {failure}");
    }
}

/// Runs the command `make` builds, up to `attempts` times: an install
/// reaches a registry over a network that may drop a download. When
/// every attempt failed, panics with `what`, the last attempt's output
/// and whatever `details` adds (a tool's own log, say).
pub(crate) fn run_retrying(
    attempts: u32,
    what: &str,
    mut make: impl FnMut() -> Command,
    details: impl Fn() -> String,
) {
    let mut failure = String::new();
    for attempt in 1..=attempts {
        if attempt > 1 {
            eprintln!("{what}: attempt {attempt} of {attempts}, after: {failure}");
            std::thread::sleep(std::time::Duration::from_secs(5 * u64::from(attempt)));
        }
        match failure_of(&mut make(), what) {
            None => return,
            Some(why) => failure = why,
        }
    }
    panic!("{what} failed: {failure}{}", details());
}

/// How running `cmd` failed (its exit status and output), if it did.
fn failure_of(cmd: &mut Command, what: &str) -> Option<String> {
    let out = cmd
        .output()
        .unwrap_or_else(|err| panic!("cannot run {what}: {err}"));
    (!out.status.success()).then(|| {
        format!(
            "{}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
