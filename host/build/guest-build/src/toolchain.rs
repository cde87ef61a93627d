//! Making sure the toolchain of the outer build can compile for the guest
//! target.
//!
//! rustup installs the `targets` of `rust-toolchain.toml` only when it
//! installs the toolchain itself, so a machine that already had the pinned
//! toolchain lacks `wasm32-wasip2` and the guest build would die with
//! "can't find crate for `core`". The build adds the target instead, with
//! `rustup target add` for the toolchain in use, and says so.

use crate::{GUEST_TARGET, fail};
use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The toolchain the outer build compiles with: its `rustc` and, when
/// rustup manages it, the toolchain's name.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// The compiler cargo uses (`$RUSTC` in a build script, else `rustc`).
    pub rustc: OsString,
    /// The rustup toolchain name (`$RUSTUP_TOOLCHAIN`, which rustup's
    /// proxies set, else the sysroot directory's name when the sysroot lies
    /// in a rustup `toolchains` directory).
    pub rustup_name: Option<String>,
}

impl Toolchain {
    /// The toolchain of the running build script (or test), from the
    /// variables cargo and rustup set.
    pub fn current() -> Self {
        let rustc = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
        let rustup_name = env::var("RUSTUP_TOOLCHAIN")
            .ok()
            .filter(|name| !name.is_empty())
            .or_else(|| {
                let sysroot = sysroot(&rustc)?;
                let parent = sysroot.parent()?;
                (parent.file_name()? == "toolchains")
                    .then(|| sysroot.file_name()?.to_str().map(str::to_owned))
                    .flatten()
            });
        Self { rustc, rustup_name }
    }

    /// The directory holding the guest target's standard library, when it
    /// is installed (it holds `libcore-*.rlib`).
    pub fn guest_libdir(&self) -> Option<PathBuf> {
        let output = Command::new(&self.rustc)
            .args(["--print", "target-libdir", "--target", GUEST_TARGET])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        let dir = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
        has_core(&dir).then_some(dir)
    }

    /// Adds the guest target with rustup when it is missing, printing a
    /// line saying so; stops the build, naming the fix, when it cannot.
    /// Returns the target's library directory.
    pub fn ensure_guest_target(&self) -> PathBuf {
        if let Some(dir) = self.guest_libdir() {
            return dir;
        }
        let Some(name) = &self.rustup_name else {
            fail(format!(
                "the {GUEST_TARGET} standard library is not installed for {}, and rustup does \
                 not manage that compiler; install the {GUEST_TARGET} target for it (with rustup: \
                 rustup target add {GUEST_TARGET})",
                self.rustc.to_string_lossy()
            ))
        };
        // `cargo:warning` reaches the user's terminal; stderr only the log.
        let line = format!(
            "the {GUEST_TARGET} target is missing from toolchain {name}; adding it: \
             rustup target add --toolchain {name} {GUEST_TARGET}"
        );
        println!("cargo:warning={line}");
        eprintln!("{line}");
        let status = Command::new(rustup())
            .args(["target", "add", "--toolchain", name, GUEST_TARGET])
            .stdout(Stdio::from(std::io::stderr()))
            .status();
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => fail(format!(
                "`rustup target add --toolchain {name} {GUEST_TARGET}` failed ({status}; its \
                 output is above); run it by hand, then build again"
            )),
            Err(err) => fail(format!(
                "cannot run rustup to add the {GUEST_TARGET} target ({err}); run \
                 `rustup target add --toolchain {name} {GUEST_TARGET}`, then build again"
            )),
        }
        self.guest_libdir().unwrap_or_else(|| {
            fail(format!(
                "rustup added {GUEST_TARGET} to {name}, yet {} still finds no standard library \
                 for it; check `rustc --print target-libdir --target {GUEST_TARGET}`",
                self.rustc.to_string_lossy()
            ))
        })
    }
}

/// The compiler's sysroot.
fn sysroot(rustc: &OsString) -> Option<PathBuf> {
    let output = Command::new(rustc)
        .args(["--print", "sysroot"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim().to_owned()))
}

/// True when `dir` holds a `libcore-*.rlib`.
fn has_core(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libcore-") && name.ends_with(".rlib")
        })
    })
}

/// The rustup binary: the one on `PATH`, else `$CARGO_HOME/bin/rustup`.
fn rustup() -> OsString {
    let on_path = env::var_os("PATH")
        .is_some_and(|path| env::split_paths(&path).any(|dir| dir.join("rustup").is_file()));
    if on_path {
        return OsString::from("rustup");
    }
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    match cargo_home.map(|home| home.join("bin").join("rustup")) {
        Some(path) if path.is_file() => path.into_os_string(),
        _ => OsString::from("rustup"),
    }
}
