//! Python tools the suites drive as real counterparts (the official MCP
//! client, say), installed from PyPI into a virtual environment under the
//! target directory once and reused by later runs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `python` of a virtual environment in `root/<name>` holding exactly
/// `packages` (pinned `name==version` specs), made with `python3 -m venv`
/// and pip the first time. Several tests may ask at once: each builds in a
/// directory of its own and the first to finish wins the name.
///
/// # Panics
///
/// When Python 3 with `venv` is missing or pip cannot install the packages:
/// the test needs them, and says how to get them.
pub fn venv(root: &Path, name: &str, packages: &[&str]) -> PathBuf {
    // One build at a time in this process; other processes build in
    // directories of their own.
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = root.join(name);
    let python = dir.join("bin").join("python");
    let marker = dir.join(".kaizen-packages");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&marker).is_ok_and(|have| have == wanted) && python.is_file() {
        return python;
    }
    let building = root.join(format!("{name}.building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(root).expect("creating the venv root");
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&building),
        "python3 -m venv (Python 3 with its venv module; Debian: apt-get install python3-venv)",
    );
    run(
        Command::new(building.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(packages),
        &format!("pip install {} (pip must reach PyPI)", packages.join(" ")),
    );
    std::fs::write(building.join(".kaizen-packages"), &wanted).expect("writing the venv marker");
    // A venv's scripts name its path, so it is used where it was built:
    // the winner keeps its build directory under the final name through a
    // link.
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&dir).expect("removing an old venv"),
        Ok(_) => std::fs::remove_file(&dir).expect("removing an old venv link"),
        Err(_) => {}
    }
    if std::os::unix::fs::symlink(&building, &dir).is_err() {
        // Another test got there first; its venv is as good.
        assert!(python.is_file(), "cannot make {}", dir.display());
        let _ = std::fs::remove_dir_all(&building);
    }
    python
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|err| panic!("cannot run {what}: {err}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
