//! Builds the built-in plugins in `plugins/` for wasm32-wasip2 (with
//! `kaizen-guest-build`, into the shared `<target>/wasm-guests`) and embeds
//! them in the binary: `$OUT_DIR/builtins.rs` is the table
//! `&[(name, include_str!(manifest), include_bytes!(component), blake3), ..]`
//! that `src/builtins.rs` includes.
//!
//! The manifests and components are first copied to `$OUT_DIR/builtins`,
//! and the table includes and hashes those copies: a later guest build (of
//! the test plugins, or of another profile) cannot change the embedded
//! bytes under the hash.

use kaizen_guest_build::{
    GuestDir, assemble, discover, fail, manifest_dir, out_dir, path_str, read, rerun_if_changed,
    rerun_if_workspace_changed,
};
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest_dir = manifest_dir();
    let repo = manifest_dir.ancestors().nth(2).unwrap_or(&manifest_dir);
    let workspace = repo.join("plugins");
    for path in [&repo.join("sdk/rust"), &repo.join("wit")] {
        rerun_if_changed(path);
    }

    let guests = GuestDir::lock();
    let plugins = discover(&workspace);
    rerun_if_workspace_changed(&workspace, &plugins);
    let built: Vec<PathBuf> = guests
        .build_rust_plugins(&workspace, &plugins, "the built-in plugins")
        .into_iter()
        .zip(&plugins)
        .map(|(wasm, plugin)| {
            wasm.unwrap_or_else(|| {
                fail(format!(
                    "{}: a built-in plugin must be a Rust crate (a Cargo.toml beside plugin.toml)",
                    plugin.dir.display()
                ))
            })
        })
        .collect();
    let embedded = out_dir().join("builtins");
    assemble(&embedded, &plugins, &built);
    drop(guests);

    let mut table = String::from("&[\n");
    for plugin in &plugins {
        let dir = embedded.join(&plugin.name);
        let wasm = dir.join(&plugin.component);
        let _ = writeln!(
            table,
            "    ({:?}, include_str!({:?}), include_bytes!({:?}), {:?}),",
            plugin.name,
            path_str(&dir.join("plugin.toml")),
            path_str(&wasm),
            blake3::hash(&read(&wasm)).as_bytes()
        );
    }
    table.push_str("]\n");
    let out = out_dir().join("builtins.rs");
    fs::write(&out, table)
        .unwrap_or_else(|err| fail(format!("cannot write {}: {err}", out.display())));
}
