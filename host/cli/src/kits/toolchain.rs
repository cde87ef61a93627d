//! Installing and running the tools a kit builds with: each pinned tool
//! goes once into a directory of the toolchain cache (under a lock, so that
//! two builds do not install it twice), and each command's failure names
//! what to do.

use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Marks a tool's directory as completely installed.
const COMPLETE: &str = ".complete";

/// Where toolchains are installed: `KAIZEN_TOOLCHAINS_DIR`, else
/// `$KAIZEN_HOME/toolchains`.
pub fn cache_dir(home: &Path) -> anyhow::Result<PathBuf> {
    match std::env::var_os("KAIZEN_TOOLCHAINS_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            crate::home::private_state_dir(&dir, "KAIZEN_TOOLCHAINS_DIR")?;
            Ok(dir)
        }
        None => Ok(home.join("toolchains")),
    }
}

/// True when an install into `dir` completed.
pub fn is_installed(dir: &Path) -> bool {
    dir.join(COMPLETE).is_file()
}

/// `dir`, with `what` installed into it by `install` unless an earlier
/// install completed; a half-done install is started over.
pub fn installed(
    dir: &Path,
    what: &str,
    install: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<PathBuf> {
    if is_installed(dir) {
        return Ok(dir.to_path_buf());
    }
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let mut lock_path = dir.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock = std::fs::File::create(&lock_path)
        .with_context(|| format!("creating {}", Path::new(&lock_path).display()))?;
    lock.lock()
        .context("waiting for another install to finish")?;
    if is_installed(dir) {
        return Ok(dir.to_path_buf());
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("removing the unfinished install in {}", dir.display()))?;
    }
    eprintln!(
        "kaizen: installing {what} into {} (first build only; this takes a while)",
        dir.display()
    );
    install(dir).with_context(|| format!("installing {what}"))?;
    std::fs::write(dir.join(COMPLETE), what)?;
    Ok(dir.to_path_buf())
}

/// Runs `cmd` to its end, its output going to the user; `what` says what
/// it was doing, `fix` what to do when it fails.
pub fn run(cmd: &mut Command, what: &str, fix: &str) -> anyhow::Result<()> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let status = cmd.status().map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => {
            anyhow::anyhow!("{what}: `{program}` is not installed or not on PATH; {fix}")
        }
        _ => anyhow::anyhow!("{what}: cannot run `{program}`: {err}"),
    })?;
    if !status.success() {
        bail!("{what} failed ({status}); {fix}");
    }
    Ok(())
}

/// `cmd` with its standard output sent to ours for errors: a build's
/// chatter is diagnostics, and a build for a run must keep the run's
/// output (e.g. stream-json) clean.
pub fn stdout_to_stderr(cmd: &mut Command) -> &mut Command {
    cmd.stdout(std::process::Stdio::from(std::io::stderr()))
}

/// The path of `program` on `PATH`.
pub fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}
