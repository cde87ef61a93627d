//! Reads the contract versions from `wit/` (one directory per version,
//! holding what changed since the one before) and writes
//! `$OUT_DIR/contract.rs`: `CONTRACT_VERSION` (the newest),
//! `SUPPORTED_CONTRACTS` (all of them) and the host's bindings, generated
//! from the newest. A new `wit/vX.Y.Z` is thereby the host's version
//! without any file repeating it.
//!
//! Each version is put together in full under `$OUT_DIR/wit/vX.Y.Z`; the
//! bindings are generated from there, and the tests read it (a released
//! version's full text never changes).

use kaizen_guest_build::{assemble_contracts, manifest_dir, out_dir, path_str};
use std::fmt::Write as _;

fn main() {
    let wit = manifest_dir().join("../../../wit");
    let assembled = assemble_contracts(&wit, &out_dir().join("wit"));
    let versions: Vec<&str> = assembled
        .iter()
        .map(|(version, _)| version.as_str())
        .collect();
    let Some((newest, newest_dir)) = assembled.last() else {
        kaizen_guest_build::fail(format!("{} holds no contract version", wit.display()));
    };
    let mut src = String::new();
    let _ = writeln!(
        src,
        "/// The newest contract version this host implements (`kaizen:plugin@…`):\n\
         /// the newest directory in `wit/`.\n\
         pub const CONTRACT_VERSION: &str = {newest:?};\n\n\
         /// Every contract version this host loads components of, oldest first:\n\
         /// the directories in `wit/`.\n\
         pub const SUPPORTED_CONTRACTS: &[&str] = &{versions:?};"
    );
    write(&out_dir().join("contract.rs"), &src);
    let bindings = format!(
        "wasmtime::component::bindgen!({{\n    path: {:?},\n    world: \"plugin\",\n    \
         imports: {{ default: async }},\n    exports: {{ default: async }},\n}});\n",
        path_str(newest_dir)
    );
    write(&out_dir().join("bindings.rs"), &bindings);
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|err| {
        kaizen_guest_build::fail(format!("cannot write {}: {err}", path.display()))
    });
}
