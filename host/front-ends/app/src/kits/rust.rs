//! Rust plugins: `cargo build --target wasm32-wasip2` against the SDK that
//! matches this kaizen, which `.cargo/config.toml` patches in for
//! `kaizen-sdk`.

use super::toolchain::Step;
use super::{Kit, Project};
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};

const TARGET: &str = "wasm32-wasip2";

/// Builds the crate in `project.dir` and copies its component to
/// `project.output`.
pub async fn build(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    ensure_target(project, kit).await?;
    patch_sdk(&project.dir, &kit.root.join("sdk").join("rust"))?;
    let out = cargo(project, kit)?
        .args(["build", "--release", "--target", TARGET])
        .arg("--message-format=json-render-diagnostics")
        .output(&kit.containment)
        .await?;
    kit.notices
        .output(String::from_utf8_lossy(&out.stderr).into_owned());
    if out.exit_code != Some(0) {
        bail!("cargo build failed; fix the errors above and build again");
    }
    let built = String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .find_map(cdylib_artifact)
        .context(
            "cargo built no .wasm library; Cargo.toml needs `crate-type = [\"cdylib\"]` under [lib]",
        )?;
    project.take(&built)
}

/// `cargo test` in the project, against the kit's SDK.
pub async fn test(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    patch_sdk(&project.dir, &kit.root.join("sdk").join("rust"))?;
    cargo(project, kit)?.arg("test").tests(kit).await
}

/// The cargo that runs this kaizen (when it does), else the one on PATH,
/// in the project, with the user's Rust toolchains and crate downloads
/// (crates.io is reached for the project's dependencies).
fn cargo(project: &Project, kit: &Kit) -> anyhow::Result<Step> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Ok(Step::new(cargo, &project.dir)?
        .rust()
        .reads(&kit.root)
        .downloads())
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

/// Adds the wasm target to the toolchain the project builds with, when
/// missing.
async fn ensure_target(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    let libdir = Step::new("rustc", &project.dir)?
        .rust()
        .args(["--print", "target-libdir", "--target", TARGET])
        .output(&kit.containment)
        .await;
    let has_core = libdir
        .ok()
        .filter(|out| out.exit_code == Some(0))
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
    kit.notices.note(format!(
        "adding the {TARGET} target to your Rust toolchain (rustup target add {TARGET})"
    ));
    let mut rustup = Step::new("rustup", &project.dir)?.rust().downloads();
    if let Some(home) = rustup_home() {
        rustup = rustup.writes(home);
    }
    rustup
        .args(["target", "add", TARGET])
        .run(
            kit,
            &format!("adding the {TARGET} target"),
            &format!(
                "install Rust with rustup (https://rustup.rs), or add the {TARGET} standard library to your toolchain"
            ),
        )
        .await
        .map(drop)
}

/// Where rustup keeps its toolchains: `RUSTUP_HOME`, else `~/.rustup`.
fn rustup_home() -> Option<PathBuf> {
    std::env::var_os("RUSTUP_HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".rustup")))
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
