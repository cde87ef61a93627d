//! Python plugins: componentize-py (pinned, in a venv of the toolchain
//! cache) builds the kit's `kaizen_sdk.component`, which exports the
//! `@tool` functions of the project's `app.py`, against a world that
//! imports exactly what the manifest requests (the kit's `kaizen_build.py`
//! writes it).

use super::toolchain::{installed, run, stdout_to_stderr};
use super::{Kit, Project, copy_tree};
use anyhow::{Context as _, bail};
use std::path::Path;
use std::process::Command;

const COMPONENTIZE_PY: &str = "0.25.1";

/// Builds `app.py` and what it imports into the project's component.
pub fn build(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    let dir = &project.dir;
    if !dir.join("app.py").is_file() {
        bail!(
            "{} has no app.py; a Python plugin's tools are the @tool functions of app.py",
            dir.display()
        );
    }
    if dir.join("kaizen_sdk").exists() {
        bail!(
            "{} has its own kaizen_sdk; remove it: the build uses the kit that matches this kaizen",
            dir.display()
        );
    }
    let sdk = kit.root.join("sdk").join("python");
    let venv = installed(
        &kit.toolchains
            .join(format!("componentize-py-{COMPONENTIZE_PY}")),
        &format!("componentize-py {COMPONENTIZE_PY} (PyPI)"),
        |venv| {
            run(
                stdout_to_stderr(Command::new("python3").arg("-m").arg("venv").arg(venv)),
                "creating a Python venv",
                "Python 3.11+ with its venv module is needed (Debian: apt-get install python3 python3-venv)",
            )?;
            run(
                stdout_to_stderr(
                    Command::new(venv.join("bin").join("pip"))
                        .args(["install", "--quiet", "--disable-pip-version-check"])
                        .arg(format!("componentize-py=={COMPONENTIZE_PY}")),
                ),
                "installing componentize-py",
                "pip needs to reach PyPI",
            )
        },
    )?;
    let stage = tempfile::Builder::new()
        .prefix("kaizen-py-build-")
        .tempdir()
        .context("creating a build directory")?;
    let src = stage.path().join("src");
    copy_sources(dir, &src)?;
    let wit = stage.path().join("wit");
    let contract = kit
        .root
        .join("wit")
        .join(format!("v{}", kaizen_plugins::CONTRACT_VERSION));
    let prepared = Command::new(venv.join("bin").join("python"))
        .arg(sdk.join("kaizen_build.py"))
        .arg("prepare")
        .arg(dir.join(kaizen_plugins::MANIFEST_FILE))
        .arg(&contract)
        .arg(sdk.join("wit"))
        .arg(&src)
        .arg(&wit)
        .output()
        .context("running the kit's kaizen_build.py")?;
    if !prepared.status.success() {
        bail!(
            "cannot choose a world for {}: {}",
            dir.display(),
            String::from_utf8_lossy(&prepared.stderr).trim()
        );
    }
    let world = String::from_utf8_lossy(&prepared.stdout).trim().to_string();
    copy_tree(&sdk.join("kaizen_sdk"), &src.join("kaizen_sdk"))?;
    let built = stage.path().join("out.wasm");
    run(
        stdout_to_stderr(&mut Command::new(venv.join("bin").join("componentize-py")))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            // The Python traceback is the useful part of a failure.
            .env("RUST_BACKTRACE", "0")
            .env("RUST_LIB_BACKTRACE", "0")
            .arg("--quiet")
            .arg("-d")
            .arg(&wit)
            .args(["-w", &world, "componentize", "kaizen_sdk.component", "-p"])
            .arg(&src)
            .arg("-o")
            .arg(&built),
        "componentize-py",
        "the Python error above names the cause",
    )?;
    project.take(&built)
}

/// `python3 -m unittest` in the project, with the kit on `PYTHONPATH`.
pub fn test(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    let mut path = std::ffi::OsString::from(kit.root.join("sdk").join("python"));
    if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(existing);
    }
    run(
        Command::new("python3")
            .current_dir(&project.dir)
            .args(["-m", "unittest"])
            .env("PYTHONPATH", path),
        "the tests",
        "fix what the failures above say",
    )
}

/// The project's modules and packages, without its tests and caches.
fn copy_sources(project: &Path, src: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(src)?;
    for entry in std::fs::read_dir(project)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let hidden = name.starts_with('.');
        if path.is_file() && name.ends_with(".py") {
            let test = name.starts_with("test_")
                || name.ends_with("_test.py")
                || name == "conftest.py"
                || name == "setup.py";
            if !test {
                std::fs::copy(&path, src.join(&name))?;
            }
        } else if path.is_dir()
            && !hidden
            && !matches!(name.as_str(), "test" | "tests" | "__pycache__")
            && !name.ends_with("-info")
            && path.join("__init__.py").is_file()
        {
            copy_tree(&path, &src.join(&name))?;
        }
    }
    Ok(())
}
