//! Node tools the suites drive as real counterparts (the reference MCP
//! servers, say), installed from npm under the target directory once and
//! reused by later runs.

use crate::cache::{built_once, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory `root/<name>` whose `node_modules` holds exactly `packages`
/// (pinned `name@version` specs), installed with `npm install` the first
/// time.
///
/// # Panics
///
/// When npm is missing or cannot install the packages: the test needs
/// them, and says how to get them.
pub fn install(root: &Path, name: &str, packages: &[&str]) -> PathBuf {
    built_once(
        root,
        name,
        &packages.join("\n"),
        "node_modules",
        |building| {
            std::fs::create_dir_all(building).expect("creating the npm prefix");
            run(
                Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
                    .arg(building)
                    .args(packages),
                &format!(
                    "npm install {} (Node.js and npm, which must reach the npm registry; Debian: \
                 apt-get install npm)",
                    packages.join(" ")
                ),
            );
        },
    )
}
