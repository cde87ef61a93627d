//! Builds the guest test plugins of `tests/plugins` and assembles one
//! directory per plugin (its `plugin.toml` and `<name>.wasm`) for the host's
//! tests, the way wasmtime's `test-programs-artifacts` does.
//!
//! - Rust plugins (a directory with `Cargo.toml`) are members of the
//!   `tests/plugins` workspace, built once with a nested
//!   `cargo build --release --target wasm32-wasip2` into `<target>/wasm-guests`,
//!   shared by every profile of the main workspace (test, clippy, release).
//! - Python plugins (a directory with `app.py`) are built with
//!   componentize-py against the `tool` world; componentize-py is installed
//!   with pip into a venv under `<target>/wasm-guests` on first use.
//! - The assembled directories are `<target>/wasm-guests/plugins/<name>/`.
//!
//! Environment: `KAIZEN_WASM_GUESTS_DIR` replaces `<target>/wasm-guests`;
//! `KAIZEN_COMPONENTIZE_PY` names a componentize-py to use instead of the
//! venv's.

use std::collections::hash_map::DefaultHasher;
use std::env;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::hash::Hasher;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const COMPONENTIZE_PY_VERSION: &str = "0.25.1";
/// The world and module every Python test plugin is built from.
const PYTHON_WORLD: &str = "tool";
const PYTHON_MODULE: &str = "app";
const WASM_TARGET: &str = "wasm32-wasip2";

/// One test plugin found under `tests/plugins`.
struct Plugin {
    name: String,
    /// Its source directory.
    dir: PathBuf,
    /// The component file name the manifest names.
    component: String,
    kind: Kind,
}

enum Kind {
    /// A member of the guest workspace; the artifact's file name.
    Rust {
        artifact: String,
    },
    Python,
}

fn main() {
    let manifest_dir = PathBuf::from(env_var("CARGO_MANIFEST_DIR"));
    let repo = manifest_dir
        .parent()
        .and_then(Path::parent)
        .expect("tests/artifacts lies two levels below the repository root")
        .to_path_buf();
    let sources = repo.join("tests").join("plugins");
    let wit = repo.join("wit").join("v0.1.0");

    for path in [
        sources.clone(),
        repo.join("sdk").join("rust"),
        repo.join("wit"),
    ] {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rerun-if-env-changed=KAIZEN_WASM_GUESTS_DIR");
    println!("cargo:rerun-if-env-changed=KAIZEN_COMPONENTIZE_PY");

    let guests = guests_dir();
    create_dir(&guests);
    // Test, clippy and release builds may run this script at the same time;
    // they share the guest directory, so one at a time.
    let lock_path = guests.join(".build.lock");
    let lock = fs::File::create(&lock_path)
        .unwrap_or_else(|err| fail(format!("cannot create {}: {err}", lock_path.display())));
    lock.lock()
        .unwrap_or_else(|err| fail(format!("cannot lock {}: {err}", lock_path.display())));

    let plugins = discover(&sources);
    if plugins.iter().any(|p| matches!(p.kind, Kind::Rust { .. })) {
        build_rust(&sources, &guests);
    }
    let mut built = Vec::new();
    for plugin in &plugins {
        let wasm = match &plugin.kind {
            Kind::Rust { artifact } => {
                let wasm = guests.join(WASM_TARGET).join("release").join(artifact);
                if !wasm.is_file() {
                    fail(format!(
                        "the guest build did not produce {} for plugin `{}`; is {} a member of \
                         the workspace in {}?",
                        wasm.display(),
                        plugin.name,
                        plugin.dir.display(),
                        sources.join("Cargo.toml").display()
                    ));
                }
                wasm
            }
            Kind::Python => build_python(plugin, &wit, &guests),
        };
        built.push(wasm);
    }

    let root = guests.join("plugins");
    assemble(&root, &plugins, &built);
    write_index(&root, &plugins);
}

/// `<target>/wasm-guests`, where `<target>` is the main target directory
/// whatever the profile: OUT_DIR is `<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`.
fn guests_dir() -> PathBuf {
    if let Some(dir) = env::var_os("KAIZEN_WASM_GUESTS_DIR") {
        return PathBuf::from(dir);
    }
    let out_dir = PathBuf::from(env_var("OUT_DIR"));
    let mut target = out_dir
        .ancestors()
        .nth(4)
        .unwrap_or_else(|| fail(format!("unexpected OUT_DIR layout: {}", out_dir.display())))
        .to_path_buf();
    if env::var_os("TARGET").is_some_and(|triple| target.file_name() == Some(&triple)) {
        target.pop();
    }
    target.join("wasm-guests")
}

/// Every directory of `tests/plugins` with a `plugin.toml`, sorted by name.
fn discover(sources: &Path) -> Vec<Plugin> {
    let entries = fs::read_dir(sources)
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", sources.display())));
    let mut dirs: Vec<PathBuf> = entries
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<io::Result<_>>()
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", sources.display())));
    dirs.retain(|dir| dir.join("plugin.toml").is_file());
    dirs.sort();

    let plugins: Vec<Plugin> = dirs.into_iter().map(|dir| plugin(&dir)).collect();
    if plugins.is_empty() {
        fail(format!(
            "no plugin (a directory with plugin.toml) in {}",
            sources.display()
        ));
    }
    plugins
}

fn plugin(dir: &Path) -> Plugin {
    let manifest_path = dir.join("plugin.toml");
    let manifest = read_toml(&manifest_path);
    let section = manifest.get("plugin").and_then(toml::Value::as_table);
    let name = section
        .and_then(|t| t.get("name"))
        .and_then(toml::Value::as_str)
        .unwrap_or_else(|| fail(format!("{}: [plugin] has no name", manifest_path.display())))
        .to_owned();
    if dir.file_name() != Some(name.as_ref()) {
        fail(format!(
            "{}: the plugin is named `{name}` but its directory is not; name them alike",
            manifest_path.display()
        ));
    }
    let component = section
        .and_then(|t| t.get("component"))
        .and_then(toml::Value::as_str)
        .map_or_else(|| format!("{name}.wasm"), str::to_owned);

    let cargo_toml = dir.join("Cargo.toml");
    let kind = if cargo_toml.is_file() {
        let package = read_toml(&cargo_toml);
        let lib_name = package
            .get("lib")
            .and_then(|lib| lib.get("name"))
            .or_else(|| package.get("package").and_then(|p| p.get("name")))
            .and_then(toml::Value::as_str)
            .unwrap_or_else(|| fail(format!("{}: no package name", cargo_toml.display())));
        Kind::Rust {
            artifact: format!("{}.wasm", lib_name.replace('-', "_")),
        }
    } else if dir.join(format!("{PYTHON_MODULE}.py")).is_file() {
        Kind::Python
    } else {
        fail(format!(
            "{}: neither a Rust plugin (Cargo.toml) nor a Python one ({PYTHON_MODULE}.py)",
            dir.display()
        ))
    };
    Plugin {
        name,
        dir: dir.to_path_buf(),
        component,
        kind,
    }
}

/// Builds the whole guest workspace with a nested cargo that sees none of
/// the settings meant for the outer (native) build.
fn build_rust(sources: &Path, guests: &Path) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build",
        "--release",
        "--target",
        WASM_TARGET,
        "--manifest-path",
    ])
    .arg(sources.join("Cargo.toml"))
    .arg("--target-dir")
    .arg(guests)
    .current_dir(sources)
    // Cargo talks to the outer cargo through stdout; keep it for directives.
    .stdout(Stdio::from(io::stderr()));
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let leaks = matches!(
            key,
            "CARGO_ENCODED_RUSTFLAGS"
                | "RUSTFLAGS"
                | "CARGO_BUILD_RUSTFLAGS"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "RUSTC_WRAPPER"
                | "CARGO_BUILD_RUSTC_WRAPPER"
                | "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"
                | "CARGO_TARGET_DIR"
                | "CARGO_BUILD_TARGET_DIR"
                | "CARGO_BUILD_TARGET"
                | "CARGO_MAKEFLAGS"
                | "MAKEFLAGS"
                | "MFLAGS"
        ) || [
            "CARGO_PROFILE_",
            "CARGO_CFG_",
            "CARGO_FEATURE_",
            "CARGO_PKG_",
        ]
        .iter()
        .any(|prefix| key.starts_with(prefix));
        if leaks {
            cmd.env_remove(key);
        }
    }
    let status = cmd
        .status()
        .unwrap_or_else(|err| fail(format!("cannot run {}: {err}", cargo.to_string_lossy())));
    if !status.success() {
        fail(format!(
            "building the guest test plugins failed ({status}); see cargo's output above.\n\
             The command was: cargo build --release --target {WASM_TARGET} --manifest-path {} \
             --target-dir {}\n\
             It needs the {WASM_TARGET} target: rustup target add {WASM_TARGET}",
            sources.join("Cargo.toml").display(),
            guests.display()
        ));
    }
}

/// Builds one Python plugin with componentize-py, unless the component
/// built from the same sources, WIT and componentize-py version exists.
fn build_python(plugin: &Plugin, wit: &Path, guests: &Path) -> PathBuf {
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
        .args(["-w", PYTHON_WORLD, "componentize", PYTHON_MODULE, "-p"])
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

/// Gives `root/<name>/` the plugin's manifest and component, rewriting only
/// what changed (atomically, as tests of another build may be reading), and
/// removes directories of plugins that no longer exist.
fn assemble(root: &Path, plugins: &[Plugin], built: &[PathBuf]) {
    create_dir(root);
    for (plugin, wasm) in plugins.iter().zip(built) {
        let dir = root.join(&plugin.name);
        create_dir(&dir);
        sync_file(&plugin.dir.join("plugin.toml"), &dir.join("plugin.toml"));
        sync_file(wasm, &dir.join(&plugin.component));
    }
    let entries = fs::read_dir(root)
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", root.display())));
    for entry in entries.flatten() {
        let stale = !plugins
            .iter()
            .any(|plugin| entry.file_name() == plugin.name.as_str());
        if stale && entry.path().is_dir() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
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
    let path = PathBuf::from(env_var("OUT_DIR")).join("artifacts.rs");
    fs::write(&path, src)
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", path.display())));
}

fn sync_file(from: &Path, to: &Path) {
    let bytes = read(from);
    if fs::read(to).is_ok_and(|old| old == bytes) {
        return;
    }
    let tmp = to.with_extension(format!("tmp{}", std::process::id()));
    fs::write(&tmp, &bytes)
        .and_then(|()| fs::rename(&tmp, to))
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", to.display())));
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

fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(status) if status.success() => {}
        Ok(status) => fail(format!("{what} ({status}; its output is above)")),
        Err(err) => fail(format!(
            "{what}: cannot run {}: {err}",
            cmd.get_program().to_string_lossy()
        )),
    }
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|err| fail(format!("cannot read {}: {err}", path.display())))
}

fn read_toml(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", path.display())));
    text.parse()
        .unwrap_or_else(|err| fail(format!("{}: invalid TOML: {err}", path.display())))
}

fn create_dir(dir: &Path) {
    fs::create_dir_all(dir)
        .unwrap_or_else(|err| fail(format!("cannot create {}: {err}", dir.display())));
}

fn path_str(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| fail(format!("{} is not valid UTF-8", path.display())))
}

fn env_var(key: &str) -> String {
    env::var(key).unwrap_or_else(|_| fail(format!("cargo did not set {key}")))
}

/// Stops the build with a message saying what is missing.
fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("\nerror: kaizen-test-artifacts: {message}\n");
    std::process::exit(1)
}
