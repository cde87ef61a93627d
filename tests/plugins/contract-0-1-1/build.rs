//! Puts the frozen contract 0.1.1 together in full under `$OUT_DIR/wit`
//! (`wit/v0.1.1` holds only what changed since 0.1.0) and writes
//! `$OUT_DIR/contract.rs`: `generate_contract!`, `wit_bindgen::generate!`
//! on it with the options given.

#[path = "../../../sdk/rust/wit_versions.rs"]
mod wit_versions;

use std::path::PathBuf;

/// The contract this component stands for.
const VERSION: &str = "0.1.1";

fn main() {
    let wit = PathBuf::from(env_var("CARGO_MANIFEST_DIR")).join("../../../wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let out = PathBuf::from(env_var("OUT_DIR"));
    wit_versions::write_bindings_macro(&wit, VERSION, &out).unwrap_or_else(|err| {
        eprintln!("error: {err}");
        std::process::exit(1)
    });
}

fn env_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        eprintln!("error: cargo did not set {name}");
        std::process::exit(1)
    })
}
