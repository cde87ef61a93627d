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
    let manifest_dir = PathBuf::from(env_var("CARGO_MANIFEST_DIR"));
    let wit = manifest_dir.join("../../../wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let out = PathBuf::from(env_var("OUT_DIR"));
    let dir = wit_versions::write_assembled(&wit, VERSION, &out.join("wit"))
        .unwrap_or_else(|err| fail(&err));
    let path = dir
        .to_str()
        .unwrap_or_else(|| fail(&format!("{} is not UTF-8", dir.display())));
    let generate = format!(
        "macro_rules! generate_contract {{\n    ($($options:tt)*) => {{\n        \
         wit_bindgen::generate!({{ path: {path:?}, $($options)* }});\n    }};\n}}\n"
    );
    let file = out.join("contract.rs");
    std::fs::write(&file, generate)
        .unwrap_or_else(|err| fail(&format!("cannot write {}: {err}", file.display())));
}

fn env_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| fail(&format!("cargo did not set {name}")))
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}
