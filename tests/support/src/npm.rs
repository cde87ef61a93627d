//! Node tools the suites drive as real counterparts (the reference MCP
//! servers, say), installed from npm under the target directory once and
//! reused by later runs.

use crate::cache::{built_once, run_retrying};
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
            let logs = building.join(".npm-logs");
            run_retrying(
                3,
                &format!(
                    "npm install {} (Node.js and npm, which must reach the npm registry; Debian: \
                     apt-get install npm)",
                    packages.join(" ")
                ),
                || {
                    let mut npm = Command::new("npm");
                    // Errors shown, with npm's own log kept where the
                    // failure can quote it; some packages carry native
                    // binaries of a hundred megabytes and more, which a
                    // slow link takes minutes to bring.
                    npm.args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                        .args(["--fetch-retries=5", "--fetch-timeout=1800000"])
                        .arg("--logs-dir")
                        .arg(&logs)
                        .arg("--prefix")
                        .arg(building)
                        .args(packages);
                    npm
                },
                || newest_log_tail(&logs),
            );
        },
    )
}

/// The end of npm's newest log in `logs`, which says which request or
/// script failed and how.
fn newest_log_tail(logs: &Path) -> String {
    let newest = std::fs::read_dir(logs)
        .into_iter()
        .flatten()
        .flatten()
        .max_by_key(|entry| entry.file_name());
    let Some(text) = newest.and_then(|entry| std::fs::read_to_string(entry.path()).ok()) else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(60)..];
    format!("\nthe end of npm's log:\n{}", tail.join("\n"))
}
