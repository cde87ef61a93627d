//! Build-script support for crates that ship guest plugins (the CLI's
//! built-ins, the test plugins): one nested `cargo build` of a guest
//! workspace for `wasm32-wasip2`, in a target directory shared by every
//! profile of the outer build, so tests, clippy and release builds compile
//! the guests once.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The guest target triple.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

/// Environment variables of the outer build that must not reach the nested
/// one: flags for the host target, clippy's wrapper, the outer target dir.
const LEAKY_VARS: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_MAKEFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_PKG_NAME",
    "RUSTDOC",
    "DEBUG",
    "OPT_LEVEL",
    "PROFILE",
    "TARGET",
    "HOST",
    "NUM_JOBS",
    "OUT_DIR",
];

/// The directory shared by all profiles for guest builds:
/// `<outer target dir>/wasm-guests`, derived from `OUT_DIR`
/// (`<target>/[<triple>/]<profile>/build/<pkg>-<hash>/out`).
pub fn shared_guest_dir() -> PathBuf {
    let out_dir =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    // out -> <pkg>-<hash> -> build -> <profile>
    let profile_dir = out_dir
        .ancestors()
        .nth(3)
        .expect("OUT_DIR has the layout cargo documents");
    profile_dir
        .parent()
        .unwrap_or(profile_dir)
        .join("wasm-guests")
}

/// Builds every member of the guest workspace at `manifest` in release mode
/// for [`GUEST_TARGET`] into `target_dir`; returns the directory holding
/// the `.wasm` files. Panics with the nested build's advice on failure, as
/// build scripts do.
pub fn build_workspace(manifest: &Path, target_dir: &Path) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--workspace")
        .arg("--target")
        .arg(GUEST_TARGET)
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir);
    for var in LEAKY_VARS {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_CFG_")
            || key.starts_with("CARGO_FEATURE_")
            || key.starts_with("CARGO_PROFILE_")
        {
            cmd.env_remove(key.as_ref());
        }
    }
    let status = cmd
        .status()
        .unwrap_or_else(|err| panic!("cannot run cargo to build the guest plugins: {err}"));
    assert!(
        status.success(),
        "building the guest plugins in {} failed (see the errors above). The {GUEST_TARGET} target comes from rust-toolchain.toml; if rustup could not add it, run `rustup target add {GUEST_TARGET}`.",
        manifest.display()
    );
    target_dir.join(GUEST_TARGET).join("release")
}

/// Asks cargo to rerun the build script when anything under `path` changes.
pub fn rerun_if_changed(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}

/// The plugin directories directly under `root` (those with a
/// `plugin.toml`), sorted by name.
pub fn plugin_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("plugin.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The file cargo gives the cdylib of the crate in `dir`
/// (`my-tool` → `my_tool.wasm`).
pub fn cdylib_file(dir: &Path) -> String {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|err| panic!("{} is not valid TOML: {err}", path.display()));
    let name = doc
        .get("lib")
        .and_then(|lib| lib.get("name"))
        .or_else(|| doc.get("package").and_then(|pkg| pkg.get("name")))
        .and_then(|name| name.as_str())
        .unwrap_or_else(|| panic!("{} names no package", path.display()));
    format!("{}.wasm", name.replace('-', "_"))
}
