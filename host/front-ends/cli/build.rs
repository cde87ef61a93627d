//! Links the `kaizen` binary with packed relative relocations (`-z
//! pack-relative-relocs`) when the C library it is built against can load
//! them: 106 000 relocation entries (2.5 MB, read in full by the dynamic
//! loader at every start, so resident in every process) become a bitmap of
//! a few kilobytes. The binary is 2.4 MB smaller and each run about as
//! much smaller in memory (docs/budgets.md, "Size and memory").
//!
//! glibc loads them from 2.36 (it exports the `GLIBC_ABI_DT_RELR` version
//! the linker then requires); an older glibc, another C library, or a
//! cross build gets the binary as before.

use std::path::Path;

/// Where the C library lives on the distributions Kaizen builds on.
const LIBC: &[&str] = &[
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/aarch64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/aarch64-linux-gnu/libc.so.6",
    "/lib64/libc.so.6",
    "/usr/lib64/libc.so.6",
    "/usr/lib/libc.so.6",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if native && glibc_linux && loads_packed_relocations() {
        println!("cargo:rustc-link-arg-bin=kaizen=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc exports `GLIBC_ABI_DT_RELR`.
fn loads_packed_relocations() -> bool {
    const MARK: &[u8] = b"GLIBC_ABI_DT_RELR";
    LIBC.iter()
        .map(Path::new)
        .find(|path| path.exists())
        .and_then(|path| std::fs::read(path).ok())
        .is_some_and(|bytes| bytes.windows(MARK.len()).any(|w| w == MARK))
}
