//! Embeds the plugin kits in the binary: the contract (`wit/`) and each
//! language's kit and project template under `sdk/`, so that `kaizen
//! plugins new` and `kaizen plugins build` work from an installed binary,
//! far from this repository. The files go in as one zstd frame,
//! `$OUT_DIR/kits.zst` (a fifth of their 0.7 MB); `$OUT_DIR/kits.rs` is
//! `Kits { digest, files: &[(path, start, end), ..], packed }`, with paths
//! relative to the repository and each file's place in the unpacked frame;
//! `src/kits/embedded.rs` includes it.
//!
//! Each contract version goes in whole (`wit/vX.Y.Z/` with every file),
//! put together from the repository's `wit/`, where a version holds only
//! what changed: the kits of other languages read a version's directory
//! as it is.
//!
//! The built-in plugins written in another language than Rust (a Python
//! planner) go in as source too, under `plugins/<name>/`: the binary builds
//! them with their kit the first time a run uses one. Their manifests
//! are stamped with the newest contract version, as the guest build stamps
//! the compiled built-ins', so no manifest in `plugins/` names a version.
//!
//! The Rust SDK's `Cargo.toml` inherits from this workspace, so a
//! standalone one (the workspace's values filled in, no dev-dependencies)
//! is written to `$OUT_DIR` and embedded in its place.
//!
//! The Python kit needs the WASI WIT for outbound HTTP, which the contract
//! does not carry: it is embedded as `sdk/python/wit/deps/*.wit` from the
//! `wasip2` crate the built-in plugins depend on (its source is in cargo's
//! registry once the guest build has run).

use kaizen_guest_build::{
    assemble_contracts, fail, newest_contract, out_dir, path_str, read, rerun_if_changed,
    stamp_contract,
};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// What of the repository goes into the kits as it is (the contract
/// goes in whole, each version put together).
const TREES: &[&str] = &["sdk"];
/// Directory and file names left out: tests, build output and caches.
const SKIPPED: &[&str] = &[
    "tests",
    "target",
    "node_modules",
    "__pycache__",
    "Cargo.lock",
];

/// Embeds the kits and the sources of the built-ins in `from_source`.
pub fn embed(repo: &Path, from_source: &[PathBuf]) {
    let mut files = Vec::new();
    let contracts = out_dir().join("wit");
    for (_, dir) in assemble_contracts(&repo.join("wit"), &contracts) {
        collect(&dir, &mut files);
    }
    for tree in TREES {
        let root = repo.join(tree);
        rerun_if_changed(&root);
        collect(&root, &mut files);
    }
    for dir in from_source {
        collect(dir, &mut files);
    }
    files.sort();
    // Each file's path in the kits and where its bytes come from.
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    for wit in wasi_wit(repo) {
        let name = wit.file_name().map(|n| n.to_string_lossy().into_owned());
        entries.push((
            format!("sdk/python/wit/deps/{}", name.unwrap_or_default()),
            wit,
        ));
    }
    for file in &files {
        let relative = match file.strip_prefix(&contracts) {
            Ok(contract) => Path::new("wit").join(contract),
            Err(_) => file
                .strip_prefix(repo)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| fail(format!("{} is outside the repository", file.display()))),
        };
        let relative = path_str(&relative);
        let source = match relative {
            "sdk/rust/Cargo.toml" => standalone_sdk_manifest(repo),
            _ if relative.starts_with("plugins/") && relative.ends_with("/plugin.toml") => {
                stamped_manifest(repo, file, relative)
            }
            _ => file.clone(),
        };
        if relative.ends_with("Cargo.toml") || relative.ends_with(".rs") {
            rerun_if_changed(file);
        }
        entries.push((relative.to_owned(), source));
    }
    write_packed(&entries);
}

/// Writes `$OUT_DIR/kits.zst`, the files of `entries` one after another
/// packed in one frame, and `$OUT_DIR/kits.rs`, the table that finds
/// them in it. The digest is the one `src/kits/embedded.rs` names the
/// extracted kits by: BLAKE3 over each path and its bytes, each preceded
/// by its length.
fn write_packed(entries: &[(String, PathBuf)]) {
    let mut contents = Vec::new();
    let mut hasher = blake3::Hasher::new();
    let mut table = String::new();
    for (path, source) in entries {
        let bytes = read(source);
        hasher.update(&(path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        let start = contents.len();
        contents.extend_from_slice(&bytes);
        let _ = writeln!(table, "        ({path:?}, {start}, {}),", contents.len());
    }
    let packed = zstd::bulk::compress(&contents, crate::pack_level())
        .unwrap_or_else(|err| fail(format!("cannot pack the kits: {err}")));
    let packed_path = out_dir().join("kits.zst");
    crate::write(&packed_path, &packed);
    let source = format!(
        "Kits {{\n    digest: {:?},\n    size: {},\n    files: &[\n{table}    ],\n    packed: include_bytes!({:?}),\n}}\n",
        hasher.finalize().to_hex().as_str(),
        contents.len(),
        path_str(&packed_path)
    );
    crate::write(&out_dir().join("kits.rs"), source);
}

/// A copy of the built-in's manifest `file` (at `relative` in the
/// repository) in `$OUT_DIR`, stamped with the newest contract version.
fn stamped_manifest(repo: &Path, file: &Path, relative: &str) -> PathBuf {
    rerun_if_changed(file);
    let text = String::from_utf8(read(file))
        .unwrap_or_else(|_| fail(format!("{} is not UTF-8", file.display())));
    let stamped = stamp_contract(&text, &newest_contract(&repo.join("wit")));
    let copy = out_dir().join("stamped").join(relative);
    if let Some(dir) = copy.parent() {
        fs::create_dir_all(dir)
            .unwrap_or_else(|err| fail(format!("cannot create {}: {err}", dir.display())));
    }
    crate::write(&copy, stamped);
    copy
}

/// The `.wit` files of the `wasip2` crate that `plugins/Cargo.lock` pins,
/// from cargo's registry.
fn wasi_wit(repo: &Path) -> Vec<PathBuf> {
    let lock = toml_table(&repo.join("plugins/Cargo.lock"));
    let version = lock
        .get("package")
        .and_then(|packages| packages.as_array())
        .into_iter()
        .flatten()
        .find(|package| package.get("name").and_then(|n| n.as_str()) == Some("wasip2"))
        .and_then(|package| package.get("version")?.as_str())
        .unwrap_or_else(|| fail("plugins/Cargo.lock pins no wasip2"));
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .unwrap_or_else(|| fail("neither CARGO_HOME nor HOME is set"));
    let registry = cargo_home.join("registry").join("src");
    let deps = fs::read_dir(&registry)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|index| index.path().join(format!("wasip2-{version}")).join("wit/deps"))
        .find(|deps| deps.is_dir())
        .unwrap_or_else(|| {
            fail(format!(
                "cannot find the WIT of wasip2 {version} under {}; the built-in plugins' build should have fetched it",
                registry.display()
            ))
        });
    let mut wits: Vec<PathBuf> = fs::read_dir(&deps)
        .unwrap_or_else(|err| fail(format!("cannot list {}: {err}", deps.display())))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .collect();
    wits.sort();
    wits
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|err| fail(format!("cannot list {}: {err}", dir.display())));
    for entry in entries {
        let entry = entry.unwrap_or_else(|err| fail(format!("listing {}: {err}", dir.display())));
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // A component built by hand beside its source is not source.
        let built = name.ends_with(".pyc") || name.ends_with(".wasm");
        if name.starts_with('.') || SKIPPED.contains(&name.as_ref()) || built {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// The TOML file at `path`.
fn toml_table(path: &Path) -> toml::Table {
    String::from_utf8(read(path))
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| fail(format!("{} is not valid TOML", path.display())))
}

/// `sdk/rust/Cargo.toml` with the workspace's inherited values filled in.
fn standalone_sdk_manifest(repo: &Path) -> PathBuf {
    let workspace = toml_table(&repo.join("Cargo.toml"));
    let mut sdk = toml_table(&repo.join("sdk/rust/Cargo.toml"));
    let inherited = |section: &str| -> toml::Table {
        workspace
            .get("workspace")
            .and_then(|w| w.get(section))
            .and_then(|s| s.as_table())
            .cloned()
            .unwrap_or_default()
    };
    let package_values = inherited("package");
    let dependency_values = inherited("dependencies");
    if let Some(package) = sdk.get_mut("package").and_then(|p| p.as_table_mut()) {
        for (key, value) in package.iter_mut() {
            if is_inherited(value) {
                *value = package_values.get(key).cloned().unwrap_or_else(|| {
                    fail(format!("the workspace has no package.{key} to inherit"))
                });
            }
        }
    }
    if let Some(dependencies) = sdk.get_mut("dependencies").and_then(|d| d.as_table_mut()) {
        for (name, value) in dependencies.iter_mut() {
            if !is_inherited(value) {
                continue;
            }
            let mut resolved = match dependency_values.get(name) {
                Some(toml::Value::String(version)) => {
                    let mut table = toml::Table::new();
                    table.insert("version".into(), toml::Value::String(version.clone()));
                    table
                }
                Some(toml::Value::Table(table)) => table.clone(),
                _ => fail(format!("the workspace has no dependency {name} to inherit")),
            };
            // The member's own keys (features, optional) add to the
            // workspace's.
            if let Some(own) = value.as_table() {
                for (key, own_value) in own.iter().filter(|(key, _)| *key != "workspace") {
                    resolved.insert(key.clone(), own_value.clone());
                }
            }
            *value = toml::Value::Table(resolved);
        }
    }
    sdk.remove("dev-dependencies");
    let path = out_dir().join("kaizen-sdk.Cargo.toml");
    let text = toml::to_string(&sdk)
        .unwrap_or_else(|err| fail(format!("cannot write the SDK's manifest: {err}")));
    crate::write(&path, text);
    path
}

fn is_inherited(value: &toml::Value) -> bool {
    value
        .as_table()
        .and_then(|t| t.get("workspace"))
        .and_then(|w| w.as_bool())
        == Some(true)
}
