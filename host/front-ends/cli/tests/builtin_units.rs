//! The built-in plugins' own unit tests (their pure logic: windows, edits,
//! globbing, the Grep split, …), run natively with a nested `cargo test`
//! of the `plugins/` workspace, so that the suite's one command runs them
//! too. Their behaviour as components is covered by the `builtin_*` suites.
//!
//! The nested build has a target directory of its own
//! (`<target>/plugins-native`), so it neither waits for nor disturbs the
//! outer build's.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use std::path::Path;
use std::process::Command;

#[test]
fn the_built_in_plugins_pass_their_unit_tests() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("plugins-native");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args(["test", "--manifest-path"])
        .arg(repo.join("plugins/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        // The outer test run's settings are not the plugins'.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("running cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the built-in plugins' unit tests failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let passed: u64 = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("test result: ok. "))
        .filter_map(|rest| rest.split(' ').next()?.parse::<u64>().ok())
        .sum();
    println!("{passed} unit tests of the built-in plugins passed");
    assert!(passed > 100, "too few tests ran ({passed}):\n{stdout}");
}
