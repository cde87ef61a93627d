//! Shared by the CLI suites: how a test runs the `kaizen` binary.

#![allow(dead_code)]

pub mod run;
pub mod session;
pub mod terminal;
pub mod workspace;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One compile cache for every test: compiling the Python test plugin takes
/// seconds, and the cache is safe to share.
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// `kaizen ARGS --cwd WORKSPACE` with its own `KAIZEN_HOME`, to run.
pub fn command<I, S>(home: &Path, workspace: &Path, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(args)
        .arg("--cwd")
        .arg(workspace)
        .env("KAIZEN_HOME", home)
        .env("KAIZEN_CACHE_DIR", cache_dir())
        // Never the machine's own Claude Code settings: a test that wants
        // some sets this to a directory of its own.
        .env("CLAUDE_CONFIG_DIR", home.join("no-claude-settings"));
    cmd
}

/// `kaizen ARGS --cwd WORKSPACE` with its own `KAIZEN_HOME`, run to its end.
pub fn kaizen(home: &Path, workspace: &Path, args: &[&str]) -> Output {
    command(home, workspace, args).output().unwrap()
}

/// The stdout of a command that must have succeeded.
pub fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stderr of a command that must have failed.
pub fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure, got: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that `err` refuses `path` as outside the directories a tool may
/// read, naming the one granted (`root`) and how to grant another.
pub fn assert_outside_grant(err: &str, path: &Path, root: &Path) {
    let refusal = format!(
        "{} is outside the directories Kaizen can read ({})",
        path.display(),
        root.display()
    );
    assert!(err.contains(&refusal), "{err}");
    assert!(err.contains("--add-dir"), "{err}");
}

/// Host processes whose command line contains `marker`.
pub fn host_processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}
