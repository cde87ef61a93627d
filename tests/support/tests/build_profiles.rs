//! The release profile and its build override stay equal.
//!
//! The `kaizen-app` build script precompiles the built-in plugins with
//! wasmtime, so wasmtime, cranelift and about 110 other crates are both
//! build-time and run-time dependencies of the binary. Cargo builds a crate
//! once for both only when the two profiles are the same in every key it
//! compares; one key set in `[profile.release.build-override]` and not in
//! `[profile.release]` (`codegen-units = 16` did this, though 16 is the
//! release default) compiles all of them twice, a fifth of the first build.

use std::path::Path;

#[test]
fn the_build_override_is_the_release_profile() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let text = std::fs::read_to_string(&path).expect("the root Cargo.toml");
    let toml: toml::Table = text.parse().expect("the root Cargo.toml parses");
    let release = toml["profile"]["release"]
        .as_table()
        .expect("a [profile.release] table")
        .clone();
    let overridden = release
        .get("build-override")
        .and_then(|table| table.as_table())
        .expect("a [profile.release.build-override] table")
        .clone();
    let mut settings = release;
    settings.remove("build-override");
    assert_eq!(
        settings, overridden,
        "[profile.release] and [profile.release.build-override] differ: give both the same keys \
         and values, or cargo compiles every crate the build script shares with the binary twice"
    );
}
