//! The plugins of a guest workspace: finding them, and assembling each
//! one's directory (manifest and component) for the host.

use crate::contract::{self, newest_contract, stamp_contract};
use crate::{create_dir, fail, read_toml, rerun_if_changed, sync_bytes, sync_file};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One plugin directory of a guest workspace: a directory holding a
/// `plugin.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// The manifest's `[plugin] name`, which is also the directory's name.
    pub name: String,
    /// The plugin's source directory.
    pub dir: PathBuf,
    /// The component file name the manifest names (`component`, by default
    /// `<name>.wasm`).
    pub component: String,
    /// For a Rust plugin (a directory with `Cargo.toml`), the file name of
    /// the cdylib cargo builds (`my-tool` → `my_tool.wasm`); `None` for
    /// plugins in other languages.
    pub cdylib: Option<String>,
    /// The manifest's `[plugin] kinds` (`tool`, `hook`, `planner`).
    pub kinds: Vec<String>,
    /// The contract version [`assemble`] writes into the manifest, which
    /// names none itself: the newest in the `wit/` of the repository
    /// holding the plugin (`None` when the manifest names one, or there is
    /// no such directory).
    pub contract: Option<String>,
}

impl Plugin {
    /// The plugin's manifest, `<dir>/plugin.toml`.
    pub fn manifest(&self) -> PathBuf {
        self.dir.join("plugin.toml")
    }
}

/// Every directory directly in `root` holding a `plugin.toml`, sorted by
/// name. Stops the build when `root` cannot be read, or a manifest is
/// invalid or names its plugin differently from its directory.
///
/// Tells cargo to rerun the build script when the contract versions
/// change.
pub fn discover(root: &Path) -> Vec<Plugin> {
    let entries = fs::read_dir(root)
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", root.display())));
    let mut dirs: Vec<PathBuf> = entries
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<io::Result<_>>()
        .unwrap_or_else(|err| fail(format!("cannot read {}: {err}", root.display())));
    dirs.retain(|dir| dir.join("plugin.toml").is_file());
    dirs.sort();
    let newest = contract::wit_above(root).map(|wit| {
        rerun_if_changed(&wit);
        newest_contract(&wit)
    });
    dirs.iter()
        .map(|dir| plugin(dir, newest.as_deref()))
        .collect()
}

/// Reads the plugin in `dir`; `newest` is the contract version to stamp
/// its manifest with when it names none.
fn plugin(dir: &Path, newest: Option<&str>) -> Plugin {
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
    let kinds = section
        .and_then(|t| t.get("kinds"))
        .and_then(toml::Value::as_array)
        .map(|kinds| {
            kinds
                .iter()
                .filter_map(toml::Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let cargo_toml = dir.join("Cargo.toml");
    let cdylib = cargo_toml.is_file().then(|| cdylib_file(&cargo_toml));
    let contract = match section.and_then(|t| t.get("contract")) {
        Some(_) => None,
        None => newest.map(str::to_owned),
    };
    Plugin {
        name,
        dir: dir.to_path_buf(),
        component,
        cdylib,
        kinds,
        contract,
    }
}

/// The file cargo gives the cdylib of the package whose manifest is
/// `cargo_toml` (`[lib] name`, else the package name, with `-` → `_`).
fn cdylib_file(cargo_toml: &Path) -> String {
    let package = read_toml(cargo_toml);
    let lib_name = package
        .get("lib")
        .and_then(|lib| lib.get("name"))
        .or_else(|| package.get("package").and_then(|p| p.get("name")))
        .and_then(toml::Value::as_str)
        .unwrap_or_else(|| fail(format!("{}: no package name", cargo_toml.display())));
    format!("{}.wasm", lib_name.replace('-', "_"))
}

/// Gives `root/<name>/` each plugin's manifest (stamped with its
/// [`Plugin::contract`], if any) and component (`built[i]` is the
/// component of `plugins[i]`), rewriting only what changed, with
/// [`sync_file`], and removes the directories of plugins that no longer
/// exist.
pub fn assemble(root: &Path, plugins: &[Plugin], built: &[PathBuf]) {
    assert_eq!(plugins.len(), built.len(), "one component per plugin");
    create_dir(root);
    for (plugin, wasm) in plugins.iter().zip(built) {
        let dir = root.join(&plugin.name);
        create_dir(&dir);
        let manifest = plugin.manifest();
        match &plugin.contract {
            Some(version) => {
                let text = fs::read_to_string(&manifest).unwrap_or_else(|err| {
                    fail(format!("cannot read {}: {err}", manifest.display()))
                });
                sync_bytes(
                    stamp_contract(&text, version).as_bytes(),
                    &dir.join("plugin.toml"),
                );
            }
            None => sync_file(&manifest, &dir.join("plugin.toml")),
        }
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
