//! Builds the built-in plugins in `plugins/` for wasm32-wasip2 (with
//! `kaizen-guest-build`, into the shared `<target>/wasm-guests`),
//! precompiles them for this machine with the plugin host's engine settings
//! (`kaizen-wasm-config`), and embeds both in the binary: `$OUT_DIR/builtins.rs`
//! is the table `&[(name, include_str!(manifest), include_bytes!(packed
//! component), blake3 of the component, Some(include_bytes!(packed
//! compiled))), ..]` that `src/builtins.rs` includes, and
//! `$OUT_DIR/precompiled_for.rs` the engine key the compiled
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
//!
//! Components and compiled code are embedded packed with zstd, each
//! against a dictionary (the largest of its kind, itself embedded packed:
//! `$OUT_DIR/dictionaries.rs`), to a sixth of their size: they were most of
//! the binary. `src/builtins.rs` unpacks one when a run first needs it, and
//! the plugin host keeps the result in its compile cache. Packing at level
//! 19 (release builds; other profiles pack quickly at level 3) takes about
//! a minute of CPU for all of them, so each packed file is
//! kept in `<target>/wasm-guests/packed/` under the BLAKE3 of what it packs
//! (and of its dictionary), and only what changed is packed again.

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
use std::sync::atomic::{AtomicUsize, Ordering};

/// zstd's level for the embedded files in a release build: its strongest
/// before the `--ultra` levels, whose larger windows would cost every run
/// memory to unpack. Unpacking speed hardly depends on it.
const PACK_LEVEL: i32 = 19;

/// zstd's level for the other profiles (tests, clippy, debugging): their
/// binary's size does not matter, and level 19 costs about a minute of CPU
/// that every cold CI run would pay.
const QUICK_PACK_LEVEL: i32 = 3;

/// The level this build packs at, by its profile.
fn pack_level() -> i32 {
    if env_var("PROFILE") == "release" {
        PACK_LEVEL
    } else {
        QUICK_PACK_LEVEL
    }
}

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
    let components: Vec<PathBuf> = plugins
        .iter()
        .map(|plugin| embedded.join(&plugin.name).join(&plugin.component))
        .collect();
    let mut dictionaries = vec![pack(&guests, &components, &embedded.join("components"))];
    if precompiled.is_some() {
        let compiled: Vec<PathBuf> = plugins
            .iter()
            .map(|plugin| compiled_path(&embedded.join(&plugin.name)))
            .collect();
        dictionaries.push(pack(&guests, &compiled, &embedded.join("compiled")));
    }
    drop(guests);
    let dictionaries: Vec<String> = dictionaries
        .iter()
        .map(|path| format!("include_bytes!({:?})", path_str(path)))
        .chain(std::iter::once("b\"\"".to_owned()))
        .take(2)
        .collect();
    write(
        &out_dir().join("dictionaries.rs"),
        format!("({})\n", dictionaries.join(", ")),
    );

    let mut table = String::from("&[\n");
    for plugin in &plugins {
        let dir = embedded.join(&plugin.name);
        let wasm = dir.join(&plugin.component);
        let compiled = match &precompiled {
            Some(_) => format!(
                "Some(include_bytes!({:?}))",
                path_str(&packed_path(&compiled_path(&dir)))
            ),
            None => "None".to_owned(),
        };
        let _ = writeln!(
            table,
            "    ({:?}, include_str!({:?}), include_bytes!({:?}), {:?}, {compiled}),",
            plugin.name,
            path_str(&dir.join("plugin.toml")),
            path_str(&packed_path(&wasm)),
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

/// Where the compiled code of the built-in assembled in `dir` is kept
/// (embedded packed, from its [`packed_path`]).
fn compiled_path(dir: &Path) -> PathBuf {
    dir.join("compiled.cwasm")
}

/// Where the packed copy of `file` is written and embedded from.
fn packed_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".zst");
    file.with_file_name(name)
}

/// Packs `files` against one dictionary, the largest of them (the
/// built-ins share most of their code: the standard library, serde, the
/// SDK, so each packed alone would be twice the size): writes each
/// packed beside it (its [`packed_path`]) and the dictionary packed alone
/// to `<dictionary>.zst`, which it returns. What the shared guest
/// directory kept from an earlier build is taken as it is; the rest is
/// packed on as many threads as there are cores (the largest take seconds
/// each). Every frame records its size and a checksum, so unpacking
/// against the wrong dictionary fails rather than yielding other bytes.
fn pack(guests: &GuestDir, files: &[PathBuf], dictionary: &Path) -> PathBuf {
    let store = guests.path().join("packed");
    create_dir(&store);
    let level = pack_level();
    let mut files: Vec<(&PathBuf, Vec<u8>)> = files.iter().map(|f| (f, read(f))).collect();
    // The largest first: the dictionary, and no thread left with one at
    // the end.
    files.sort_by_key(|(_, bytes)| std::cmp::Reverse(bytes.len()));
    let Some((_, dict)) = files.first() else {
        fail("no built-in plugin to embed")
    };
    let dict_hash = blake3::hash(dict).to_hex();
    let packed_dictionary = packed_path(dictionary);
    // A file packed against the dictionary is kept under both hashes.
    let kept = |bytes: &[u8], against: bool| {
        let hash = blake3::hash(bytes).to_hex();
        let tag = if against { &dict_hash[..16] } else { "alone" };
        store.join(format!("{hash}-{tag}.{level}.zst"))
    };
    let missing: Vec<(&[u8], PathBuf, bool)> = std::iter::once((&dict[..], false))
        .chain(files.iter().map(|(_, bytes)| (&bytes[..], true)))
        .map(|(bytes, against)| (bytes, kept(bytes, against), against))
        .filter(|(_, path, _)| !path.is_file())
        .collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(missing.len()) {
            scope.spawn(|| {
                // Each thread prepares the dictionary once, for all its files.
                let prepared = zstd::dict::EncoderDictionary::copy(dict, level);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((bytes, path, against)) = missing.get(i) else {
                        break;
                    };
                    let packed = if *against {
                        zstd::bulk::Compressor::with_prepared_dictionary(&prepared)
                    } else {
                        zstd::bulk::Compressor::new(level)
                    }
                    .and_then(|mut packer| {
                        packer.include_checksum(true)?;
                        packer.include_contentsize(true)?;
                        packer.compress(bytes)
                    })
                    .unwrap_or_else(|err| fail(format!("cannot pack {}: {err}", path.display())));
                    // Two files with the same bytes are packed by two threads.
                    let tmp = path.with_extension(format!("tmp{}-{i}", std::process::id()));
                    write(&tmp, &packed);
                    fs::rename(&tmp, path).unwrap_or_else(|err| {
                        fail(format!("cannot write {}: {err}", path.display()))
                    });
                }
            });
        }
    });
    sync_file(&kept(dict, false), &packed_dictionary);
    for (file, bytes) in &files {
        sync_file(&kept(bytes, true), &packed_path(file));
    }
    packed_dictionary
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    fs::write(path, bytes)
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", path.display())));
}
