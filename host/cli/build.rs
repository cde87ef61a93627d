//! Builds the built-in plugins in `plugins/` for wasm32-wasip2 and embeds
//! them (manifest, component, content hash) in the binary.

use kaizen_guest_build::{
    build_workspace, cdylib_file, plugin_dirs, rerun_if_changed, shared_guest_dir,
};
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let repo = manifest_dir.join("../..");
    let plugins = repo.join("plugins");
    for path in [&plugins, &repo.join("sdk/rust"), &repo.join("wit")] {
        rerun_if_changed(path);
    }
    let dirs = plugin_dirs(&plugins);
    let mut table = String::from("&[\n");
    if !dirs.is_empty() {
        let wasm_dir = build_workspace(&plugins.join("Cargo.toml"), &shared_guest_dir());
        for dir in dirs {
            let name = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let wasm = wasm_dir.join(cdylib_file(&dir));
            let bytes = std::fs::read(&wasm).unwrap_or_else(|err| {
                panic!(
                    "built-in plugin {name}: cannot read {}: {err}",
                    wasm.display()
                )
            });
            let hash = blake3::hash(&bytes);
            let _ = writeln!(
                table,
                "    ({name:?}, include_str!({:?}), include_bytes!({:?}), {:?}),",
                dir.join("plugin.toml").display(),
                wasm.display(),
                hash.as_bytes()
            );
        }
    }
    table.push(']');
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("builtins.rs");
    std::fs::write(&out, table).unwrap_or_else(|err| panic!("writing {}: {err}", out.display()));
}
