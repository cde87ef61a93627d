//! Python tools the suites drive as real counterparts (the official MCP
//! client, say), installed from PyPI into a virtual environment under the
//! target directory once and reused by later runs.

use crate::cache::{built_once, run, run_retrying};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `python` of a virtual environment in `root/<name>` holding exactly
/// `packages` (pinned `name==version` specs), made with `python3 -m venv`
/// and pip the first time.
///
/// # Panics
///
/// When Python 3 with `venv` is missing or pip cannot install the packages:
/// the test needs them, and says how to get them.
pub fn venv(root: &Path, name: &str, packages: &[&str]) -> PathBuf {
    let python = Path::new("bin").join("python");
    let dir = built_once(root, name, &packages.join("\n"), "bin/python", |building| {
        run(
            Command::new("python3").arg("-m").arg("venv").arg(building),
            "python3 -m venv (Python 3 with its venv module; Debian: apt-get install python3-venv)",
        );
        run_retrying(
            3,
            &format!("pip install {} (pip must reach PyPI)", packages.join(" ")),
            || {
                let mut pip = Command::new(building.join("bin").join("pip"));
                pip.args(["install", "--quiet", "--disable-pip-version-check"])
                    .args(packages);
                pip
            },
            String::new,
        );
    });
    dir.join(python)
}
