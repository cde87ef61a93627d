//! Python plugins: componentize-py (pinned, in a venv of the toolchain
//! cache) builds the kit's `kaizen_sdk.component`, which exports the
//! `@tool` functions of the project's `app.py`, against a world that
//! imports exactly what the manifest requests (the kit's `kaizen_build.py`
//! writes it).

use super::toolchain::{Step, installed};
use super::{Kit, Project, copy_tree};
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};

const COMPONENTIZE_PY: &str = "0.25.1";

/// Builds `app.py` and what it imports into the project's component.
pub async fn build(project: &Project, kit: &Kit) -> anyhow::Result<()> {
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
    let venv = componentize_py(kit).await?;
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
        .join(format!("v{}", kaizen_plugin_host::CONTRACT_VERSION));
    let python = venv.join("bin").join("python");
    let prepared = Step::new(&python, stage.path())?
        .reads(&kit.root)
        .reads(dir)
        .arg(sdk.join("kaizen_build.py"))
        .arg("prepare")
        .arg(dir.join(kaizen_plugin_host::MANIFEST_FILE))
        .arg(&contract)
        .arg(sdk.join("wit"))
        .arg(&src)
        .arg(&wit)
        .output(&kit.containment)
        .await
        .context("running the kit's kaizen_build.py")?;
    if prepared.exit_code != Some(0) {
        bail!(
            "cannot choose a world for {}: {}",
            dir.display(),
            String::from_utf8_lossy(&prepared.stderr).trim()
        );
    }
    let world = String::from_utf8_lossy(&prepared.stdout).trim().to_string();
    copy_tree(&sdk.join("kaizen_sdk"), &src.join("kaizen_sdk"))?;
    let built = stage.path().join("out.wasm");
    Step::new(venv.join("bin").join("componentize-py"), stage.path())?
        .runs(&python)
        .reads(&kit.root)
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
        .arg(&built)
        .run(
            kit,
            "componentize-py",
            "the Python error above names the cause",
        )
        .await?;
    project.take(&built)
}

/// The venv holding componentize-py in the kit's toolchains, installed
/// from PyPI (in the sandbox) the first time.
async fn componentize_py(kit: &Kit) -> anyhow::Result<PathBuf> {
    installed(
        &kit.toolchains
            .join(format!("componentize-py-{COMPONENTIZE_PY}")),
        &format!("componentize-py {COMPONENTIZE_PY} (PyPI)"),
        &kit.notices,
        async |venv: &Path| {
            // `-I`: the standard library's venv, whatever the directory
            // holds (the step runs in the venv's own directory anyway).
            Step::new("python3", venv)?
                .python_env()
                .args(["-I", "-m", "venv"])
                .arg(venv)
                .run(
                    kit,
                    "creating a Python venv",
                    "Python 3.11+ with its venv module is needed (Debian: apt-get install python3 python3-venv)",
                )
                .await?;
            Step::new(venv.join("bin").join("pip"), venv)?
                .runs(&venv.join("bin").join("python"))
                .downloads()
                .args([
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-cache-dir",
                ])
                .arg(format!("componentize-py=={COMPONENTIZE_PY}"))
                .run(kit, "installing componentize-py", "pip needs to reach PyPI")
                .await
                .map(drop)
        },
    )
    .await
}

/// `python3 -m unittest` in the project, with the kit on `PYTHONPATH`.
pub async fn test(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    let sdk = kit.root.join("sdk").join("python");
    Step::new("python3", &project.dir)?
        .python_env()
        .reads(&sdk)
        .env("PYTHONPATH", &sdk)
        .args(["-m", "unittest"])
        .tests(kit)
        .await
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
