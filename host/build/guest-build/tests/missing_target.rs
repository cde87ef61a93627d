//! A machine whose toolchain never had `wasm32-wasip2` added: the guest
//! build adds the target itself, with rustup, and builds.
//!
//! The test makes such a machine without touching the real one: a scratch
//! `RUSTUP_HOME` holding a copy of the toolchain in use (files hard-linked,
//! rustup's own metadata copied) with the guest target taken out, and a
//! dist server on loopback that serves the target's package, packed from
//! the real toolchain's files and named in the copy's channel manifest.
//! `build_workspace` then has to notice the missing target, run `rustup
//! target add`, which downloads from the loopback server, and compile a
//! guest crate. No request leaves the machine: rustup's dist and update
//! servers point at the loopback server.
//!
//! This file holds one test because it sets process-wide variables.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use kaizen_guest_build::{GUEST_TARGET, Toolchain, build_workspace};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The package name rustup installs the guest target's library as.
const STD_COMPONENT: &str = "rust-std-wasm32-wasip2";
const PACKAGE_PATH: &str = "/dist/kaizen-test/rust-std-wasm32-wasip2.tar.gz";

#[test]
fn the_guest_build_adds_a_missing_target_with_rustup() {
    // The real toolchain must have the target to pack it. The workspace's
    // build adds it, so it is there once `cargo test --workspace` has built;
    // the test itself never downloads.
    let real = Toolchain::current();
    let real_libdir = real.guest_libdir().unwrap_or_else(|| {
        panic!(
            "the toolchain in use has no {GUEST_TARGET} target to copy from; build the \
             workspace first (`cargo build` adds it)"
        )
    });
    let name = real
        .rustup_name
        .clone()
        .expect("this test needs a rustup-managed toolchain (RUSTUP_TOOLCHAIN unset)");
    let sysroot = fs::canonicalize(output(
        Command::new(&real.rustc).args(["--print", "sysroot"]),
    ))
    .expect("the sysroot exists");
    let real_target = real_libdir.parent().unwrap().to_path_buf();

    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let rustup_home = scratch.path().join("rustup");
    let toolchain = rustup_home.join("toolchains").join(&name);
    copy_toolchain_without_guest(&sysroot, &toolchain);
    let real_home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".rustup"));
    fs::copy(
        real_home.join("settings.toml"),
        rustup_home.join("settings.toml"),
    )
    .expect("copying rustup's settings.toml");

    let package = pack_target(&real_target, scratch.path());
    let server = DistServer::start(fs::read(&package).unwrap());
    let url = format!("{}{PACKAGE_PATH}", server.root);
    point_manifest_at(&toolchain, &url, &sha256(&package));

    // From here on everything runs the copy. rustup's proxy pointed
    // LD_LIBRARY_PATH at the real toolchain, whose compiler driver would
    // then report the real sysroot.
    // SAFETY: the only test of this binary; no other thread reads the
    // environment while it runs.
    unsafe {
        std::env::set_var("LD_LIBRARY_PATH", toolchain.join("lib"));
        std::env::set_var("RUSTUP_HOME", &rustup_home);
        std::env::set_var("RUSTUP_TOOLCHAIN", &name);
        std::env::set_var("RUSTC", toolchain.join("bin/rustc"));
        std::env::set_var("CARGO", toolchain.join("bin/cargo"));
        std::env::set_var("RUSTUP_DIST_SERVER", &server.root);
        std::env::set_var("RUSTUP_UPDATE_ROOT", format!("{}/rustup", server.root));
    }
    let copy = Toolchain {
        rustc: toolchain.join("bin/rustc").into_os_string(),
        rustup_name: Some(name.clone()),
    };
    assert_eq!(
        copy.guest_libdir(),
        None,
        "the scratch toolchain still has {GUEST_TARGET}"
    );

    let guest = write_guest_workspace(scratch.path());
    let release = build_workspace(
        &guest.join("Cargo.toml"),
        &guest.join("target"),
        "the probe guest",
    );

    let wasm = fs::read(release.join("probe.wasm")).expect("the guest was built");
    assert_eq!(&wasm[..8], b"\0asm\x0d\x00\x01\x00", "a component");
    assert!(
        copy.guest_libdir()
            .is_some_and(|dir| dir.starts_with(&toolchain)),
        "rustup installed {GUEST_TARGET} into the scratch toolchain"
    );
    assert_eq!(
        server.downloads.load(Ordering::SeqCst),
        1,
        "the package came from the loopback server once"
    );
    assert!(
        real.guest_libdir().is_some(),
        "the real toolchain is untouched"
    );
}

/// Recreates `from` (a toolchain's sysroot) at `to` without the guest
/// target and without the documentation: files hard-linked, except
/// rustup's metadata in `lib/rustlib`, which rustup rewrites in place and
/// so is copied, then edited to forget the guest target.
fn copy_toolchain_without_guest(from: &Path, to: &Path) {
    link_tree(from, to, &|rel| {
        rel == Path::new("share") || rel == Path::new("lib/rustlib").join(GUEST_TARGET)
    });
    let rustlib = to.join("lib/rustlib");
    let components = fs::read_to_string(rustlib.join("components")).unwrap();
    let kept: String = components
        .lines()
        .filter(|line| *line != STD_COMPONENT)
        .map(|line| format!("{line}\n"))
        .collect();
    fs::write(rustlib.join("components"), kept).unwrap();
    let _ = fs::remove_file(rustlib.join(format!("manifest-{STD_COMPONENT}")));

    let config_path = rustlib.join("multirust-config.toml");
    let mut config: toml::Table = fs::read_to_string(&config_path).unwrap().parse().unwrap();
    if let Some(toml::Value::Array(list)) = config.get_mut("components") {
        list.retain(|c| c.get("target").and_then(toml::Value::as_str) != Some(GUEST_TARGET));
    }
    fs::write(&config_path, toml::to_string(&config).unwrap()).unwrap();
}

/// Mirrors the directory tree `from` at `to` with hard links, skipping the
/// paths (relative to `from`) that `skip` names; the files directly in
/// `lib/rustlib` are copied.
fn link_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
    fn walk(root: &Path, rel: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) {
        fs::create_dir_all(to.join(rel)).unwrap();
        for entry in fs::read_dir(root.join(rel)).unwrap() {
            let entry = entry.unwrap();
            let rel = rel.join(entry.file_name());
            if skip(&rel) {
                continue;
            }
            let kind = entry.file_type().unwrap();
            let (src, dst) = (root.join(&rel), to.join(&rel));
            if kind.is_dir() {
                walk(root, &rel, to, skip);
            } else if kind.is_symlink() {
                std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
            } else if rel.parent() == Some(Path::new("lib/rustlib")) {
                fs::copy(&src, &dst).unwrap();
            } else {
                fs::hard_link(&src, &dst)
                    .or_else(|_| fs::copy(&src, &dst).map(drop))
                    .unwrap();
            }
        }
    }
    walk(from, Path::new(""), to, skip);
}

/// A rust-installer package of the guest target's library, packed from
/// `target` (`<sysroot>/lib/rustlib/wasm32-wasip2`): the format rustup
/// unpacks (a top directory, `rust-installer-version`, `components`, and
/// per component a `manifest.in` and its files).
fn pack_target(target: &Path, scratch: &Path) -> PathBuf {
    let stage = scratch.join("package");
    let top = stage.join("rust-std-kaizen-test");
    let component = top.join(STD_COMPONENT);
    fs::create_dir_all(&component).unwrap();
    fs::write(top.join("rust-installer-version"), "3\n").unwrap();
    fs::write(top.join("components"), format!("{STD_COMPONENT}\n")).unwrap();
    fs::write(
        component.join("manifest.in"),
        format!("dir:lib/rustlib/{GUEST_TARGET}\n"),
    )
    .unwrap();
    link_tree(
        target,
        &component.join("lib/rustlib").join(GUEST_TARGET),
        &|_| false,
    );
    let tarball = scratch.join("rust-std.tar.gz");
    output(
        Command::new("tar")
            .arg("czf")
            .arg(&tarball)
            .arg("-C")
            .arg(&stage)
            .arg("rust-std-kaizen-test"),
    );
    tarball
}

/// Makes the copy's installed channel manifest offer the guest target's
/// library at `url` with `sha256`, and nothing else for it.
fn point_manifest_at(toolchain: &Path, url: &str, sha256: &str) {
    let path = toolchain.join("lib/rustlib/multirust-channel-manifest.toml");
    let mut manifest: toml::Table = fs::read_to_string(&path).unwrap().parse().unwrap();
    let targets = manifest["pkg"]["rust-std"]["target"]
        .as_table()
        .cloned()
        .expect("the manifest lists rust-std's targets");
    let mut entry = toml::Table::new();
    entry.insert("available".into(), true.into());
    entry.insert("url".into(), url.into());
    entry.insert("hash".into(), sha256.into());
    entry.insert("components".into(), toml::Value::Array(vec![]));
    entry.insert("extensions".into(), toml::Value::Array(vec![]));
    let mut targets = targets;
    targets.insert(GUEST_TARGET.into(), entry.into());
    manifest
        .get_mut("pkg")
        .and_then(|p| p.get_mut("rust-std"))
        .and_then(|p| p.as_table_mut())
        .unwrap()
        .insert("target".into(), targets.into());
    fs::write(&path, toml::to_string(&manifest).unwrap()).unwrap();
}

/// A one-crate guest workspace.
fn write_guest_workspace(scratch: &Path) -> PathBuf {
    let root = scratch.join("guest");
    fs::create_dir_all(root.join("probe/src")).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"probe\"]\nresolver = \"3\"\n",
    )
    .unwrap();
    fs::write(
        root.join("probe/Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [lib]\ncrate-type = [\"cdylib\"]\n",
    )
    .unwrap();
    fs::write(
        root.join("probe/src/lib.rs"),
        "#[unsafe(no_mangle)]\npub extern \"C\" fn answer() -> u32 {\n    42\n}\n",
    )
    .unwrap();
    root
}

/// An HTTP server on loopback that serves the package at [`PACKAGE_PATH`]
/// and counts its downloads; anything else is a 404.
struct DistServer {
    root: String,
    downloads: Arc<AtomicUsize>,
}

impl DistServer {
    fn start(package: Vec<u8>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let root = format!("http://{}", listener.local_addr().unwrap());
        let downloads = Arc::new(AtomicUsize::new(0));
        let counter = downloads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    continue;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = request.split_whitespace().nth(1).unwrap_or_default();
                let (status, body): (&str, &[u8]) = if path == PACKAGE_PATH {
                    counter.fetch_add(1, Ordering::SeqCst);
                    ("200 OK", &package)
                } else {
                    ("404 Not Found", b"not here")
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream
                    .write_all(head.as_bytes())
                    .and_then(|()| stream.write_all(body));
            }
        });
        Self { root, downloads }
    }
}

fn sha256(path: &Path) -> String {
    let out = output(Command::new("sha256sum").arg(path));
    out.split_whitespace().next().unwrap().to_owned()
}

/// The command's stdout, trimmed; panics naming the command when it fails.
fn output(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|err| panic!("cannot run {cmd:?}: {err}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
}
