//! Builds the built-in plugins in `plugins/` for wasm32-wasip2 (with
//! `kaizen-guest-build`, into the shared `<target>/wasm-guests`),
//! precompiles them for this machine with the plugin host's engine settings
//! (`kaizen-wasm-config`), and embeds both in the binary: `$OUT_DIR/builtins.rs`
//! is the table `&[(name, include_str!(manifest), include_bytes!(component),
//! blake3, Some(include_bytes!(compiled))), ..]` that `src/builtins.rs`
//! includes, and `$OUT_DIR/precompiled_for.rs` the engine key the compiled
//! code is for. A fresh `KAIZEN_HOME` then starts without compiling; an
//! engine with another key (another CPU, settings) compiles the component.
//!
//! The manifests, components and compiled code are first copied to
//! `$OUT_DIR/builtins`, and the table includes and hashes those copies: a
//! later guest build (of the test plugins, or of another profile) cannot
//! change the embedded bytes under the hash. Compiled code is kept in
//! `<target>/wasm-guests/precompiled/<key>/<blake3>.cwasm`, so the
//! profiles of one target directory (test, clippy, release) compile each
//! component once.
//!
//! A built-in in another language (a Python planner: `app.py` beside its
//! manifest) is not built here, which would make every build of kaizen
//! install that language's toolchain: its source is embedded with the kits
//! and the binary builds it the first time a run uses it.
//!
//! Nothing is precompiled when cross-compiling (the code would be for this
//! machine's CPU), or when `KAIZEN_PRECOMPILE=0`.

#[path = "build_kits.rs"]
mod kits;

use kaizen_guest_build::{
    GuestDir, Plugin, assemble, create_dir, discover, env_var, fail, manifest_dir, out_dir,
    path_str, read, rerun_if_changed, rerun_if_workspace_changed, sync_file,
};
use kaizen_wasm_config::Precompiler;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = manifest_dir();
    let repo = manifest_dir.ancestors().nth(3).unwrap_or(&manifest_dir);
    let workspace = repo.join("plugins");
    // The built-ins' path dependencies outside their workspace.
    for path in [
        &repo.join("sdk/rust"),
        &repo.join("wit"),
        &repo.join("host/engines/audit-log"),
    ] {
        rerun_if_changed(path);
    }
    println!("cargo:rerun-if-env-changed=KAIZEN_PRECOMPILE");

    let guests = GuestDir::lock();
    let discovered = discover(&workspace);
    rerun_if_workspace_changed(&workspace, &discovered);
    let (plugins, from_source): (Vec<Plugin>, Vec<Plugin>) = discovered
        .into_iter()
        .partition(|plugin| plugin.cdylib.is_some());
    for plugin in &from_source {
        if !plugin.dir.join("app.py").is_file() {
            fail(format!(
                "{}: a built-in plugin is a Rust crate (a Cargo.toml beside plugin.toml) or a Python plugin (an app.py)",
                plugin.dir.display()
            ));
        }
    }
    let built: Vec<PathBuf> = guests
        .build_rust_plugins(&workspace, &plugins, "the built-in plugins")
        .into_iter()
        .zip(&plugins)
        .map(|(wasm, plugin)| {
            wasm.unwrap_or_else(|| fail(format!("{}: nothing was built", plugin.dir.display())))
        })
        .collect();
    // After the guest build, which fetched the crates the kits take WIT from.
    let sources: Vec<PathBuf> = from_source.iter().map(|p| p.dir.clone()).collect();
    kits::embed(repo, &sources);
    let embedded = out_dir().join("builtins");
    assemble(&embedded, &plugins, &built);
    let precompiled = precompile(&guests, &embedded, &plugins);
    drop(guests);

    let mut table = String::from("&[\n");
    for plugin in &plugins {
        let dir = embedded.join(&plugin.name);
        let wasm = dir.join(&plugin.component);
        let compiled = match &precompiled {
            Some(_) => format!("Some(include_bytes!({:?}))", path_str(&compiled_path(&dir))),
            None => "None".to_owned(),
        };
        let _ = writeln!(
            table,
            "    ({:?}, include_str!({:?}), include_bytes!({:?}), {:?}, {compiled}),",
            plugin.name,
            path_str(&dir.join("plugin.toml")),
            path_str(&wasm),
            blake3::hash(&read(&wasm)).as_bytes()
        );
    }
    table.push_str("]\n");
    write(&out_dir().join("builtins.rs"), &table);
    let key = precompiled.as_deref().unwrap_or_default();
    write(&out_dir().join("precompiled_for.rs"), format!("{key:?}\n"));
}

/// Compiles each assembled built-in in `embedded` (reusing what the shared
/// guest directory holds), writes `<embedded>/<name>/compiled.cwasm`, and
/// returns the engine's compatibility key; `None` when precompiling is off.
fn precompile(guests: &GuestDir, embedded: &Path, plugins: &[Plugin]) -> Option<String> {
    let cross = env_var("TARGET") != env_var("HOST");
    if cross || std::env::var("KAIZEN_PRECOMPILE").is_ok_and(|v| v == "0") {
        return None;
    }
    let precompiler = Precompiler::new()
        .unwrap_or_else(|err| fail(format!("cannot build the engine to precompile: {err:#}")));
    let key = precompiler.compatibility_key();
    let store = guests.path().join("precompiled").join(&key);
    create_dir(&store);
    for plugin in plugins {
        let dir = embedded.join(&plugin.name);
        let wasm = read(&dir.join(&plugin.component));
        let kept = store.join(format!("{}.cwasm", blake3::hash(&wasm).to_hex()));
        if !kept.is_file() {
            let code = precompiler.precompile(&wasm).unwrap_or_else(|err| {
                fail(format!(
                    "cannot precompile built-in `{}`: {err:#}",
                    plugin.name
                ))
            });
            let tmp = kept.with_extension(format!("tmp{}", std::process::id()));
            write(&tmp, &code);
            fs::rename(&tmp, &kept)
                .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", kept.display())));
        }
        sync_file(&kept, &compiled_path(&dir));
    }
    Some(key)
}

/// Where the compiled code of the built-in assembled in `dir` is embedded
/// from.
fn compiled_path(dir: &Path) -> PathBuf {
    dir.join("compiled.cwasm")
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    fs::write(path, bytes)
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", path.display())));
}
