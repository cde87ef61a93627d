//! The release profile and its build override stay equal, and both
//! profiles compile the same crates (the procedural macros) unoptimized.
//!
//! The `kaizen-app` build script precompiles the built-in plugins with
//! wasmtime, so wasmtime, cranelift and about 110 other crates are both
//! build-time and run-time dependencies of the binary. Cargo builds a crate
//! once for both only when the two profiles are the same in every key it
//! compares; one key set in `[profile.release.build-override]` and not in
//! `[profile.release]` (`codegen-units = 16` did this, though 16 is the
//! release default) compiles all of them twice, a fifth of the first build.

use std::collections::BTreeSet;
use std::path::Path;

/// The root manifest, parsed.
fn root_manifest() -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let text = std::fs::read_to_string(&path).expect("the root Cargo.toml");
    text.parse().expect("the root Cargo.toml parses")
}

#[test]
fn the_build_override_is_the_release_profile() {
    let toml = root_manifest();
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
    // Package tables apply to a crate in both roles, so they need no copy.
    settings.remove("package");
    assert_eq!(
        settings, overridden,
        "[profile.release] and [profile.release.build-override] differ: give both the same keys \
         and values, or cargo compiles every crate the build script shares with the binary twice"
    );
}

/// The packages a profile compiles unoptimized (the procedural macros).
fn unoptimized(toml: &toml::Table, profile: &str) -> BTreeSet<String> {
    toml["profile"][profile]
        .get("package")
        .and_then(|packages| packages.as_table())
        .into_iter()
        .flatten()
        .filter(|(_, table)| table.get("opt-level").and_then(|l| l.as_integer()) == Some(0))
        .map(|(name, _)| name.clone())
        .collect()
}

#[test]
fn both_profiles_compile_the_same_macros_unoptimized() {
    let toml = root_manifest();
    let dev = unoptimized(&toml, "dev");
    let release = unoptimized(&toml, "release");
    assert!(
        dev.contains("syn"),
        "the procedural macros' list is gone: {dev:?}"
    );
    assert_eq!(
        dev, release,
        "[profile.dev.package.*] and [profile.release.package.*] list different crates at \
         opt-level 0: keep one list in both"
    );
}
