//! Builds the guest test plugins of `tests/plugins` and assembles one
//! directory per plugin (its `plugin.toml` and component) for the host's
//! tests, the way wasmtime's `test-programs-artifacts` does.
//!
//! - Rust plugins (a directory with `Cargo.toml`) are members of the
//!   `tests/plugins` workspace, built once by `kaizen-guest-build` into
//!   `<target>/wasm-guests`, shared by every profile of the main workspace.
//! - Python plugins (a directory with `app.py`) are built with
//!   componentize-py against the `tool`, `hook` or `planner` world (see
//!   `python_world`); componentize-py is installed
//!   with pip into a venv under `<target>/wasm-guests` on first use.
//! - The assembled directories are `<target>/wasm-guests/plugins/<name>/`.
//!
//! Environment: `KAIZEN_WASM_GUESTS_DIR` replaces `<target>/wasm-guests`;
//! `KAIZEN_COMPONENTIZE_PY` names a componentize-py to use instead of the
//! venv's.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use kaizen_guest_build::{
    GuestDir, Plugin, assemble, assemble_contract, create_dir, discover, fail, manifest_dir,
    newest_contract, out_dir, path_str, read, rerun_if_changed, rerun_if_workspace_changed, run,
};
use std::collections::hash_map::DefaultHasher;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::hash::Hasher;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const COMPONENTIZE_PY_VERSION: &str = "0.25.1";
/// The module every Python test plugin is built from.
const PYTHON_MODULE: &str = "app";

/// The world a Python plugin is built against, and the directory in `wit`
/// of the contract version it is built from: `planner` (the newest; 0.1.4
/// was the first with a stable `planning`) for a planner, `hook` for a hook
/// plugin, else `tool` (0.1.0, so that the suites keep a component of the
/// oldest version). Each world imports only `log`.
fn python_world(plugin: &Plugin, wit: &Path) -> (&'static str, PathBuf) {
    let is = |kind: &str| plugin.kinds.iter().any(|k| k == kind);
    if is("planner") {
        // A version directory holds what changed: put it together.
        let newest = newest_contract(wit);
        (
            "planner",
            assemble_contract(wit, &newest, &out_dir().join("wit")),
        )
    } else if is("hook") {
        ("hook", wit.join("v0.1.0"))
    } else {
        ("tool", wit.join("v0.1.0"))
    }
}

fn main() {
    let manifest_dir = manifest_dir();
    let repo = manifest_dir.ancestors().nth(2).unwrap_or(&manifest_dir);
    let sources = repo.join("tests/plugins");
    let wit = repo.join("wit");
    for path in [&repo.join("sdk/rust"), &repo.join("wit")] {
        rerun_if_changed(path);
    }
    println!("cargo:rerun-if-env-changed=KAIZEN_COMPONENTIZE_PY");

    let guests = GuestDir::lock();
    let plugins = discover(&sources);
    rerun_if_workspace_changed(&sources, &plugins);
    if plugins.is_empty() {
        fail(format!(
            "no plugin (a directory with plugin.toml) in {}",
            sources.display()
        ));
    }
    let rust = guests.build_rust_plugins(&sources, &plugins, "the guest test plugins");
    let built: Vec<PathBuf> = plugins
        .iter()
        .zip(rust)
        .map(|(plugin, wasm)| match wasm {
            Some(wasm) => wasm,
            None if plugin.dir.join(format!("{PYTHON_MODULE}.py")).is_file() => {
                build_python(plugin, &wit, guests.path())
            }
            None => fail(format!(
                "{}: neither a Rust plugin (Cargo.toml) nor a Python one ({PYTHON_MODULE}.py)",
                plugin.dir.display()
            )),
        })
        .collect();
    let root = guests.path().join("plugins");
    assemble(&root, &plugins, &built);
    write_index(&root, &plugins);
}

/// Builds one Python plugin with componentize-py against its world in
/// `wit` (see [`python_world`]), unless the component built from the same
/// sources, WIT and componentize-py version exists.
fn build_python(plugin: &Plugin, wit: &Path, guests: &Path) -> PathBuf {
    let (world, wit) = python_world(plugin, wit);
    let wit = wit.as_path();
    let work = guests.join("python").join(&plugin.name);
    let staged = work.join("src");
    let wasm = work.join(&plugin.component);
    let stamp = work.join(format!("{}.stamp", plugin.component));

    let sources = plain_files(&plugin.dir);
    let mut hasher = DefaultHasher::new();
    hasher.write(COMPONENTIZE_PY_VERSION.as_bytes());
    for path in sources.iter().chain(&plain_files(wit)) {
        hasher.write(path.file_name().unwrap_or_default().as_encoded_bytes());
        hasher.write(&read(path));
    }
    let key = format!("{:016x}", hasher.finish());
    if wasm.is_file() && fs::read_to_string(&stamp).is_ok_and(|s| s == key) {
        return wasm;
    }

    // Build from a copy so that nothing (`__pycache__`) lands in the sources.
    if staged.exists() {
        fs::remove_dir_all(&staged)
            .unwrap_or_else(|err| fail(format!("cannot remove {}: {err}", staged.display())));
    }
    create_dir(&staged);
    for path in &sources {
        let to = staged.join(path.file_name().unwrap_or_default());
        fs::copy(path, &to).unwrap_or_else(|err| {
            fail(format!(
                "cannot copy {} to {}: {err}",
                path.display(),
                to.display()
            ))
        });
    }

    let componentize_py = componentize_py(guests);
    let tmp = work.join(format!("{}.tmp", plugin.component));
    let mut cmd = Command::new(&componentize_py);
    cmd.arg("-d")
        .arg(wit)
        .args(["-w", world, "componentize", PYTHON_MODULE, "-p"])
        .arg(&staged)
        .arg("-o")
        .arg(&tmp)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::from(io::stderr()));
    run(
        &mut cmd,
        &format!(
            "componentize-py could not build the Python test plugin `{}` from {}",
            plugin.name,
            plugin.dir.display()
        ),
    );
    fs::rename(&tmp, &wasm).unwrap_or_else(|err| {
        fail(format!(
            "cannot move {} to {}: {err}",
            tmp.display(),
            wasm.display()
        ))
    });
    fs::write(&stamp, key)
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", stamp.display())));
    wasm
}

/// componentize-py: `KAIZEN_COMPONENTIZE_PY`, or the one in the guest
/// directory's venv, installed with pip when it is not there yet.
fn componentize_py(guests: &Path) -> PathBuf {
    if let Some(path) = env::var_os("KAIZEN_COMPONENTIZE_PY") {
        return PathBuf::from(path);
    }
    let venv = guests.join("venv");
    let bin = venv.join("bin").join("componentize-py");
    let marker = venv.join(format!(".componentize-py-{COMPONENTIZE_PY_VERSION}"));
    if bin.is_file() && marker.is_file() {
        return bin;
    }
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        &format!(
            "cannot create a Python venv in {} to install componentize-py, which builds the \
             Python test plugin: Python 3 with its venv module is needed (Debian: apt-get \
             install python3 python3-venv)",
            venv.display()
        ),
    );
    run(
        Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .arg(format!("componentize-py=={COMPONENTIZE_PY_VERSION}"))
            .stdout(Stdio::from(io::stderr())),
        &format!(
            "pip could not install componentize-py=={COMPONENTIZE_PY_VERSION} into {}, and it is \
             needed to build the Python test plugin; pip needs to reach PyPI (or set \
             KAIZEN_COMPONENTIZE_PY to an installed componentize-py {COMPONENTIZE_PY_VERSION})",
            venv.display()
        ),
    );
    if !bin.is_file() {
        fail(format!(
            "pip installed componentize-py=={COMPONENTIZE_PY_VERSION} but {} does not exist",
            bin.display()
        ));
    }
    fs::write(&marker, "")
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", marker.display())));
    bin
}

/// Writes `$OUT_DIR/artifacts.rs`, included by the crate's lib.
fn write_index(root: &Path, plugins: &[Plugin]) {
    let mut src = String::new();
    let _ = writeln!(src, "const PLUGINS_ROOT: &str = {:?};", path_str(root));
    src.push_str("/// Names of all test plugins.\npub const PLUGINS: &[&str] = &[\n");
    for plugin in plugins {
        let _ = writeln!(src, "    {:?},", plugin.name);
    }
    src.push_str("];\n/// The component file of each plugin, in the order of [`PLUGINS`].\n");
    src.push_str("const COMPONENTS: &[&str] = &[\n");
    for plugin in plugins {
        let _ = writeln!(src, "    {:?},", plugin.component);
    }
    src.push_str("];\n");
    let path = out_dir().join("artifacts.rs");
    fs::write(&path, src)
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", path.display())));
}

/// The regular files directly in `dir`, sorted.
fn plain_files(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", dir.display())));
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}
