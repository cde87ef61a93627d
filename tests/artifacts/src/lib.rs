//! The guest test plugins of `tests/plugins`, built by this crate's build
//! script, for the host's tests (wasmtime's `test-programs-artifacts`
//! pattern).
//!
//! Each plugin is assembled into its own directory holding its
//! `plugin.toml` and its component, ready to be loaded as a plugin
//! directory:
//!
//! ```no_run
//! let dir = kaizen_test_artifacts::plugin_dir("hello");
//! assert!(dir.join("plugin.toml").is_file());
//! assert!(kaizen_test_artifacts::wasm("hello").is_file());
//! ```
//!
//! The build script builds the Rust plugins once per target directory
//! (into `<target>/wasm-guests`, whatever the profile) and the Python plugin
//! with componentize-py, and reruns when `tests/plugins`, `sdk/rust` or
//! `wit` change.

use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));

/// Directory holding one assembled directory per test plugin.
pub fn plugins_root() -> &'static Path {
    Path::new(PLUGINS_ROOT)
}

/// The assembled directory (plugin.toml + wasm) of test plugin `name`.
///
/// # Panics
///
/// On an unknown name (listing the known ones), or when the directory has
/// gone since the build script made it.
pub fn plugin_dir(name: &str) -> PathBuf {
    let dir = plugins_root().join(name);
    if !PLUGINS.contains(&name) {
        panic!(
            "no test plugin is named `{name}`; the test plugins are: {}",
            PLUGINS.join(", ")
        );
    }
    if !dir.is_dir() {
        panic!(
            "{} is gone; touch tests/plugins/Cargo.toml and build again to rebuild the test \
             plugins",
            dir.display()
        );
    }
    dir
}

/// The built component of test plugin `name`.
///
/// # Panics
///
/// Like [`plugin_dir`].
pub fn wasm(name: &str) -> PathBuf {
    let dir = plugin_dir(name);
    let index = PLUGINS
        .iter()
        .position(|plugin| *plugin == name)
        .expect("plugin_dir checked the name");
    dir.join(COMPONENTS[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_is_assembled_as_a_component() {
        for name in PLUGINS {
            let dir = plugin_dir(name);
            assert!(dir.join("plugin.toml").is_file(), "{name}");
            let bytes = std::fs::read(wasm(name)).unwrap();
            // The component-model preamble: magic, version 0x0d, layer 1.
            assert_eq!(&bytes[..8], b"\0asm\x0d\x00\x01\x00", "{name}");
        }
    }

    #[test]
    fn the_expected_plugins_exist() {
        for name in [
            "counter",
            "fs-probe",
            "hello",
            "hostile",
            "http-probe",
            "needs-process",
            "py-echo",
        ] {
            assert!(PLUGINS.contains(&name), "{name}");
        }
    }

    #[test]
    #[should_panic(expected = "no test plugin is named `nope`")]
    fn unknown_names_panic() {
        plugin_dir("nope");
    }
}
