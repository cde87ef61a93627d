//! Rust plugins: `cargo build --target wasm32-wasip2` against the SDK that
//! matches this kaizen, which `.cargo/config.toml` patches in for
//! `kaizen-sdk`.

use super::toolchain::run;
use super::{Kit, Project};
use anyhow::{Context as _, bail};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TARGET: &str = "wasm32-wasip2";

/// Builds the crate in `project.dir` and copies its component to
/// `project.output`.
pub fn build(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    ensure_target(&project.dir)?;
    patch_sdk(&project.dir, &kit.root.join("sdk").join("rust"))?;
    let mut cargo = cargo();
    cargo
        .current_dir(&project.dir)
        .args(["build", "--release", "--target", TARGET])
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped());
    let mut child = cargo.spawn().map_err(|err| {
        anyhow::anyhow!("cannot run cargo ({err}); install Rust from https://rustup.rs")
    })?;
    let stdout = child.stdout.take().context("cargo's output")?;
    let mut built = None;
    for line in BufReader::new(stdout).lines() {
        if let Some(wasm) = cdylib_artifact(&line?) {
            built = Some(wasm);
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo build failed ({status}); fix the errors above and build again");
    }
    let built = built.context(
        "cargo built no .wasm library; Cargo.toml needs `crate-type = [\"cdylib\"]` under [lib]",
    )?;
    project.take(&built)
}

/// `cargo test` in the project, against the kit's SDK.
pub fn test(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    patch_sdk(&project.dir, &kit.root.join("sdk").join("rust"))?;
    run(
        cargo().current_dir(&project.dir).arg("test"),
        "the tests",
        "fix what the failures above say",
    )
}

/// The cargo that runs this kaizen (when it does), else the one on PATH.
fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The `.wasm` file of a `cdylib` in one line of cargo's JSON messages.
fn cdylib_artifact(line: &str) -> Option<PathBuf> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" {
        return None;
    }
    let kinds = message["target"]["kind"].as_array()?;
    if !kinds.iter().any(|kind| kind == "cdylib") {
        return None;
    }
    message["filenames"]
        .as_array()?
        .iter()
        .filter_map(|name| name.as_str())
        .find(|name| name.ends_with(".wasm"))
        .map(PathBuf::from)
}

/// Adds the wasm target to the toolchain `dir` builds with, when missing.
fn ensure_target(dir: &Path) -> anyhow::Result<()> {
    let libdir = Command::new("rustc")
        .current_dir(dir)
        .args(["--print", "target-libdir", "--target", TARGET])
        .stderr(Stdio::null())
        .output();
    let has_core = libdir
        .ok()
        .filter(|out| out.status.success())
        .is_some_and(|out| {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            std::fs::read_dir(dir).is_ok_and(|entries| {
                entries
                    .filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().starts_with("libcore-"))
            })
        });
    if has_core {
        return Ok(());
    }
    eprintln!(
        "kaizen: adding the {TARGET} target to your Rust toolchain (rustup target add {TARGET})"
    );
    run(
        Command::new("rustup")
            .current_dir(dir)
            .args(["target", "add", TARGET]),
        &format!("adding the {TARGET} target"),
        &format!(
            "install Rust with rustup (https://rustup.rs), or add the {TARGET} standard library to your toolchain"
        ),
    )
}

/// Points `kaizen-sdk` at `sdk` in the project's `.cargo/config.toml`,
/// keeping whatever else the file says.
fn patch_sdk(dir: &Path, sdk: &Path) -> anyhow::Result<()> {
    let path = dir.join(".cargo").join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let mut config: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", path.display()))?;
    let sdk = sdk.to_str().context("the kit's path is not UTF-8")?;
    if config
        .get("patch")
        .and_then(|p| p.get("crates-io"))
        .and_then(|c| c.get("kaizen-sdk"))
        .and_then(|k| k.get("path"))
        .and_then(|p| p.as_str())
        == Some(sdk)
    {
        return Ok(());
    }
    config["patch"]["crates-io"]["kaizen-sdk"]["path"] = toml_edit::value(sdk);
    if let Some(patch) = config["patch"].as_table_mut() {
        patch.set_implicit(true);
    }
    std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
    std::fs::write(&path, config.to_string()).with_context(|| format!("writing {}", path.display()))
}
