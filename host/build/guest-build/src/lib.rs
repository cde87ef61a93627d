//! Build-script support for crates that ship guest plugins (the CLI's
//! built-ins in `plugins/`, the test plugins in `tests/plugins`).
//!
//! A guest workspace is built with one nested `cargo build --release
//! --target wasm32-wasip2` into `<target>/wasm-guests`, a directory shared
//! by every profile of the outer build, so tests, clippy and release builds
//! compile the guests once. A build script using this crate:
//!
//! ```no_run
//! use kaizen_guest_build::{GuestDir, assemble, discover, fail, rerun_if_workspace_changed};
//! # let (workspace, out) = (std::path::Path::new("plugins"), std::path::Path::new("out"));
//!
//! let guests = GuestDir::lock(); // one build script at a time
//! let plugins = discover(workspace); // the directories with a plugin.toml
//! rerun_if_workspace_changed(workspace, &plugins);
//! let built: Vec<_> = guests
//!     .build_rust_plugins(workspace, &plugins, "the plugins")
//!     .into_iter()
//!     .zip(&plugins)
//!     .map(|(wasm, plugin)| {
//!         wasm.unwrap_or_else(|| fail(format!("{} is not a Rust crate", plugin.dir.display())))
//!     })
//!     .collect();
//! assemble(out, &plugins, &built); // out/<name>/{plugin.toml, <component>}
//! ```
//!
//! Every function stops the build with [`fail`] on an error, naming what
//! went wrong and what to do: these run in build scripts, where a panic's
//! backtrace helps nobody.
//!
//! Environment: `KAIZEN_WASM_GUESTS_DIR` replaces `<target>/wasm-guests`.

#![allow(
    clippy::disallowed_methods,
    reason = "build scripts run cargo and rustup while Kaizen is built, outside any session"
)]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

use std::env;
use std::ffi::{OsStr, OsString};
use std::fmt::Display;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod contract;
mod plugins;
mod toolchain;
// The rule for reading `wit/`, shared with the SDK's build script (which
// alone writes the bindings macro).
#[allow(dead_code, reason = "the bindings macro is the SDK build's")]
#[path = "../../../../sdk/rust/wit_versions.rs"]
mod wit_versions;
pub use contract::{
    assemble_contract, assemble_contracts, contract_versions, newest_contract, stamp_contract,
};
pub use plugins::{Plugin, assemble, discover};
pub use toolchain::Toolchain;

/// The guest target triple.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

/// The variable that replaces `<target>/wasm-guests` as the guest directory.
pub const GUESTS_DIR_VAR: &str = "KAIZEN_WASM_GUESTS_DIR";

/// Variables of the outer build that must not reach the nested one: flags
/// for the host target, clippy's wrapper, the outer target directory, the
/// outer jobserver.
const LEAKY_VARS: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "RUSTDOC",
    "DEBUG",
    "OPT_LEVEL",
    "PROFILE",
    "TARGET",
    "HOST",
    "NUM_JOBS",
    "OUT_DIR",
];

/// Prefixes of variables of the outer build that must not reach the nested
/// one (the outer profile, cfg, features and package).
const LEAKY_PREFIXES: &[&str] = &[
    "CARGO_PROFILE_",
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
];

/// The shared guest directory, locked for the calling build script until
/// this value is dropped.
///
/// Test, clippy and release builds of the main workspace may run build
/// scripts at the same time, and the CLI's and the test artifacts' scripts
/// both build into this directory; the lock makes them take turns, so that
/// one never reads files another is rewriting.
pub struct GuestDir {
    path: PathBuf,
    _lock: fs::File,
}

impl GuestDir {
    /// Locates the guest directory (see [`guests_dir`]), creates it and
    /// takes its lock, waiting for any other build script holding it.
    pub fn lock() -> Self {
        let path = guests_dir();
        create_dir(&path);
        let lock_path = path.join(".build.lock");
        let lock = fs::File::create(&lock_path)
            .unwrap_or_else(|err| fail(format!("cannot create {}: {err}", lock_path.display())));
        lock.lock()
            .unwrap_or_else(|err| fail(format!("cannot lock {}: {err}", lock_path.display())));
        Self { path, _lock: lock }
    }

    /// The directory: the nested builds' target directory, and a place for
    /// other build products (`<dir>/plugins`, venvs).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the nested builds put the components:
    /// `<dir>/wasm32-wasip2/release`.
    pub fn release_dir(&self) -> PathBuf {
        self.path.join(GUEST_TARGET).join("release")
    }

    /// Builds every member of the workspace in `workspace` (the directory
    /// holding its `Cargo.toml`) with [`build_workspace`], if any of
    /// `plugins` is a Rust plugin, and returns each plugin's built component
    /// in the order of `plugins` (`None` for plugins that are not Rust
    /// crates). `what` names the plugins in messages ("the built-in
    /// plugins").
    ///
    /// Stops the build when a Rust plugin's component is missing afterwards
    /// (the crate is not a member of the workspace).
    pub fn build_rust_plugins(
        &self,
        workspace: &Path,
        plugins: &[Plugin],
        what: &str,
    ) -> Vec<Option<PathBuf>> {
        let manifest = workspace.join("Cargo.toml");
        if plugins.iter().any(|plugin| plugin.cdylib.is_some()) {
            build_workspace(&manifest, &self.path, what);
        }
        let release = self.release_dir();
        plugins
            .iter()
            .map(|plugin| {
                let wasm = release.join(plugin.cdylib.as_ref()?);
                if !wasm.is_file() {
                    fail(format!(
                        "the guest build did not produce {} for plugin `{}`; is {} a member of \
                         the workspace in {}?",
                        wasm.display(),
                        plugin.name,
                        plugin.dir.display(),
                        manifest.display()
                    ));
                }
                Some(wasm)
            })
            .collect()
    }
}

/// The shared guest directory: `$KAIZEN_WASM_GUESTS_DIR` when set, else
/// `<target>/wasm-guests`, where `<target>` is the main target directory
/// whatever the profile and `--target`: `OUT_DIR` is
/// `<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`.
///
/// Tells cargo to rerun the build script when the variable changes.
pub fn guests_dir() -> PathBuf {
    println!("cargo:rerun-if-env-changed={GUESTS_DIR_VAR}");
    if let Some(dir) = env::var_os(GUESTS_DIR_VAR) {
        return PathBuf::from(dir);
    }
    let out_dir = out_dir();
    shared_dir(&out_dir, env::var_os("TARGET").as_deref())
        .unwrap_or_else(|| fail(format!("unexpected OUT_DIR layout: {}", out_dir.display())))
}

/// `<target>/wasm-guests` for a build script whose `OUT_DIR` is `out_dir`
/// and whose `TARGET` is `triple`.
fn shared_dir(out_dir: &Path, triple: Option<&OsStr>) -> Option<PathBuf> {
    let mut target = out_dir.ancestors().nth(4)?.to_path_buf();
    if triple.is_some_and(|triple| target.file_name() == Some(triple)) {
        target.pop();
    }
    Some(target.join("wasm-guests"))
}

/// Builds every member of the guest workspace whose manifest is `manifest`
/// in release mode for [`GUEST_TARGET`] into `target_dir`, and returns the
/// directory holding the components (`<target_dir>/wasm32-wasip2/release`).
///
/// The guest target is added to the toolchain first when it is missing
/// ([`Toolchain::ensure_guest_target`]). The nested cargo sees none of the
/// settings meant for the outer (native) build, and its stdout goes to
/// stderr: a build script's stdout carries directives to the outer cargo.
/// `what` names the plugins in the failure message.
pub fn build_workspace(manifest: &Path, target_dir: &Path, what: &str) -> PathBuf {
    Toolchain::current().ensure_guest_target();
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build",
        "--release",
        "--workspace",
        "--target",
        GUEST_TARGET,
    ])
    .arg("--manifest-path")
    .arg(manifest)
    .arg("--target-dir")
    .arg(target_dir)
    .stdout(Stdio::from(io::stderr()));
    if let Some(dir) = manifest.parent() {
        cmd.current_dir(dir);
    }
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if LEAKY_VARS.contains(&key) || LEAKY_PREFIXES.iter().any(|p| key.starts_with(p)) {
            cmd.env_remove(key);
        }
    }
    let status = cmd
        .status()
        .unwrap_or_else(|err| fail(format!("cannot run {}: {err}", cargo.to_string_lossy())));
    if !status.success() {
        fail(format!(
            "building {what} failed ({status}); see cargo's output above.\n\
             The command was: cargo build --release --workspace --target {GUEST_TARGET} \
             --manifest-path {} --target-dir {}",
            manifest.display(),
            target_dir.display()
        ));
    }
    target_dir.join(GUEST_TARGET).join("release")
}

/// Makes `to` hold the bytes of `from`. Leaves it untouched (modification
/// time included) when it already does; otherwise writes a temporary file
/// beside it and renames it over `to`, so that a reader (a test of another
/// build) sees the old file or the new one, never half of one.
pub fn sync_file(from: &Path, to: &Path) {
    sync_bytes(&read(from), to);
}

/// Makes `to` hold `bytes`, the way [`sync_file`] does.
pub fn sync_bytes(bytes: &[u8], to: &Path) {
    if fs::read(to).is_ok_and(|old| old == bytes) {
        return;
    }
    let tmp = to.with_extension(format!("tmp{}", std::process::id()));
    fs::write(&tmp, bytes)
        .and_then(|()| fs::rename(&tmp, to))
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", to.display())));
}

/// Asks cargo to rerun the build script when anything under `path` changes.
pub fn rerun_if_changed(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}

/// Asks cargo to rerun the build script when the guest workspace in
/// `workspace` changes: its `Cargo.toml` (where a new plugin becomes a
/// member), `Cargo.lock`, each plugin's directory, and any
/// `.cargo/config.toml` above it. Not the whole
/// workspace directory, which holds `target/` after a native `cargo test`
/// of the plugins.
pub fn rerun_if_workspace_changed(workspace: &Path, plugins: &[Plugin]) {
    rerun_if_changed(&workspace.join("Cargo.toml"));
    // A path that does not exist would rerun the script on every build.
    let lock = workspace.join("Cargo.lock");
    if lock.is_file() {
        rerun_if_changed(&lock);
    }
    for plugin in plugins {
        rerun_if_changed(&plugin.dir);
    }
    // Cargo config above the guest workspace (e.g. wasm rustflags) shapes
    // the nested build too.
    for dir in workspace.ancestors() {
        let config = dir.join(".cargo").join("config.toml");
        if config.is_file() {
            rerun_if_changed(&config);
        }
    }
}

/// Runs `cmd`; stops the build with `what` (what could not be done, and
/// how to fix it) when it cannot start or fails.
pub fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(status) if status.success() => {}
        Ok(status) => fail(format!("{what} ({status}; its output is above)")),
        Err(err) => fail(format!(
            "{what}: cannot run {}: {err}",
            cmd.get_program().to_string_lossy()
        )),
    }
}

/// The bytes of `path`; stops the build when it cannot be read.
pub fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|err| fail(format!("cannot read {}: {err}", path.display())))
}

/// The TOML table in `path`; stops the build when it cannot be read or
/// parsed.
pub fn read_toml(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", path.display())));
    text.parse()
        .unwrap_or_else(|err| fail(format!("{}: invalid TOML: {err}", path.display())))
}

/// Creates `dir` and its parents; stops the build when it cannot.
pub fn create_dir(dir: &Path) {
    fs::create_dir_all(dir)
        .unwrap_or_else(|err| fail(format!("cannot create {}: {err}", dir.display())));
}

/// `path` as UTF-8 (for generated source); stops the build when it is not.
pub fn path_str(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| fail(format!("{} is not valid UTF-8", path.display())))
}

/// The variable `key` that cargo sets for build scripts; stops the build
/// when it is missing or not UTF-8.
pub fn env_var(key: &str) -> String {
    env::var(key).unwrap_or_else(|_| fail(format!("cargo did not set {key}")))
}

/// The build script's `OUT_DIR`.
pub fn out_dir() -> PathBuf {
    PathBuf::from(env_var("OUT_DIR"))
}

/// The directory of the package whose build script is running
/// (`CARGO_MANIFEST_DIR`).
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env_var("CARGO_MANIFEST_DIR"))
}

/// Stops the build with `message` (say what is missing and what to do),
/// prefixed with the name of the package being built.
pub fn fail(message: impl Display) -> ! {
    let package = env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "guest build".to_owned());
    eprintln!("\nerror: {package}: {message}\n");
    std::process::exit(1)
}

#[cfg(test)]
mod tests;
