//! Shared by the CLI suites: how a test runs the `kaizen` binary.

#![allow(dead_code)]

pub mod claude_project;
pub mod cluster;
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

/// Where the kits' toolchains (componentize-py, for the Python built-in
/// planner too) install, once per target directory.
pub fn toolchains_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("kit-toolchains")
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
        .env("KAIZEN_TOOLCHAINS_DIR", toolchains_dir())
        // Never the machine's own Claude Code settings: a test that wants
        // some sets this to a directory of its own.
        .env("CLAUDE_CONFIG_DIR", home.join("no-claude-settings"));
    cmd
}

/// `kaizen ARGS --cwd WORKSPACE` with its own `KAIZEN_HOME`, run to its end.
pub fn kaizen(home: &Path, workspace: &Path, args: &[&str]) -> Output {
    command(home, workspace, args).output().unwrap()
}

/// `kaizen ARGS` with only `KAIZEN_HOME` set, for the commands that take
/// no workspace (`sessions`, `approve`, `audit`), run to its end.
pub fn at_home(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(args)
        .env("KAIZEN_HOME", home)
        .output()
        .unwrap()
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

pub use kaizen_test_support::KillOnDrop;

/// Starts `cmd` with its stderr piped and reads it until a line contains
/// `ready`; from then on its stderr is drained, as a terminal would. The
/// process and that line (trimmed).
pub fn spawn_until(cmd: &mut Command, ready: &str) -> (KillOnDrop, String) {
    use std::io::BufRead;
    let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let child = KillOnDrop(child);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the process ended before saying `{ready}`"
        );
        if line.contains(ready) {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, line.trim().to_string())
}

/// Starts `cmd`, a `kaizen mcp serve --http`: the process and the URL it
/// serves at.
pub fn serve_mcp_http(cmd: &mut Command) -> (KillOnDrop, String) {
    const SERVING: &str = "kaizen: serving MCP at ";
    let (child, line) = spawn_until(cmd, SERVING);
    let url = line.trim_start_matches(SERVING).to_string();
    (child, url)
}
