//! Reads the contract versions from `wit/` (one directory per version) and
//! writes `$OUT_DIR/contract.rs`: `CONTRACT_VERSION` (the newest),
//! `SUPPORTED_CONTRACTS` (all of them) and the host's bindings, generated
//! from the newest. A new `wit/vX.Y.Z` is thereby the host's version
//! without any file repeating it.

use kaizen_guest_build::{
    contract_versions, manifest_dir, newest_contract, out_dir, path_str, rerun_if_changed,
};
use std::fmt::Write as _;

fn main() {
    let wit = manifest_dir().join("../../../wit");
    rerun_if_changed(&wit);
    let versions = contract_versions(&wit);
    let newest = newest_contract(&wit);
    let newest_dir = wit.join(format!("v{newest}"));
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
        path_str(&newest_dir)
    );
    write(&out_dir().join("bindings.rs"), &bindings);
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|err| {
        kaizen_guest_build::fail(format!("cannot write {}: {err}", path.display()))
    });
}
