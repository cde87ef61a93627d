//! Puts the newest version of the `kaizen:plugin` contract together in
//! full under `$OUT_DIR/wit` (each `wit/vX.Y.Z` beside this SDK holds only
//! what changed since the version before) and writes
//! `$OUT_DIR/contract.rs`: `generate_contract!`, which runs
//! `wit_bindgen::generate!` on it with the options given. The bindings
//! thereby follow the newest contract without any file naming it.
//!
//! The contract sits at `../../wit` both in the repository and in a
//! plugin kit that `kaizen plugins new` writes out.

#[path = "wit_versions.rs"]
mod wit_versions;

use std::path::PathBuf;

fn main() {
    let wit = PathBuf::from(env_var("CARGO_MANIFEST_DIR")).join("../../wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let newest = wit_versions::versions(&wit)
        .unwrap_or_else(|err| fail(&err))
        .pop()
        .unwrap_or_else(|| fail(&format!("{} holds no contract version", wit.display())));
    let out = PathBuf::from(env_var("OUT_DIR"));
    wit_versions::write_bindings_macro(&wit, &newest, &out).unwrap_or_else(|err| fail(&err));
}

fn env_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| fail(&format!("cargo did not set {name}")))
}

fn fail(message: &str) -> ! {
    eprintln!("error: kaizen-sdk: {message}");
    std::process::exit(1)
}
