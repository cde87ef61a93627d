//! Shared by the CLI suites: how a test runs the `kaizen` binary.

#![allow(dead_code)]

pub mod run;
pub mod session;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One compile cache for every test: compiling the Python test plugin takes
/// seconds, and the cache is safe to share.
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// `kaizen ARGS --cwd WORKSPACE` with its own `KAIZEN_HOME`.
pub fn kaizen(home: &Path, workspace: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(args)
        .arg("--cwd")
        .arg(workspace)
        .env("KAIZEN_HOME", home)
        .env("KAIZEN_CACHE_DIR", cache_dir())
        .output()
        .unwrap()
}
