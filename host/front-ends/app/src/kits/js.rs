//! JavaScript and TypeScript plugins: bundled and componentized by jco with
//! componentize-js (StarlingMonkey), pinned by the kit's
//! `toolchain/package-lock.json` and installed with `npm ci` on first use.

use super::toolchain::{Step, installed};
use super::{Kit, Project};
use anyhow::{Context as _, bail};
use kaizen_sandbox::Containment;
use std::path::{Path, PathBuf};

/// The project's module when package.json names none, in this order.
pub const MODULES: &[&str] = &["tool.js", "tool.ts", "index.js", "index.ts"];

/// The kit's files a project carries a copy of, so that its tests run
/// under plain Node with no install step.
pub const PROJECT_KIT: &[&str] = &["index.js", "index.d.ts", "package.json"];

/// Builds the module of `project` into its component.
pub async fn build(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    check_node(&kit.containment).await?;
    let sdk = kit.root.join("sdk").join("js");
    let jco = toolchain(&sdk, kit).await?;
    let main = main_module(&project.dir)?;
    let copy = project.dir.join("kaizen-sdk").join("index.js");
    if copy.is_file()
        && std::fs::read(&copy).ok() != std::fs::read(sdk.join("kaizen-sdk/index.js")).ok()
    {
        kit.notices.note(format!(
            "note: {} differs from this kaizen's kit; its tests ran against other code. Copy {} over it to update",
            copy.display(),
            sdk.join("kaizen-sdk/index.js").display()
        ));
    }
    let work = tempfile::Builder::new()
        .prefix("kaizen-js-build-")
        .tempdir()
        .context("creating a build directory")?;
    let entry = work.path().join("entry.js");
    let js = |path: &Path| serde_json::to_string(&path.to_string_lossy()).unwrap_or_default();
    let missing = serde_json::to_string(&format!(
        "{main} must export the tools interface: add `export const tools = exportTools(myTool, ...)`"
    ))?;
    // The top level runs when the component is pre-initialized, so a
    // module without `tools` fails the build with this message. Reading a
    // copy keeps the bundler from resolving `plugin.tools` statically.
    let text = format!(
        "import {component};\nimport * as plugin from {module};\nconst exported = {{ ...plugin }};\nif (exported.tools == null || typeof exported.tools.call !== \"function\") {{\n  throw new Error({missing});\n}}\nexport const tools = exported.tools;\n",
        component = js(&sdk.join("kaizen-sdk").join("component.js")),
        module = js(&project.dir.join(&main)),
    );
    std::fs::write(&entry, text)?;
    let built = work.path().join("out.wasm");
    let mut jco_cmd = Step::new("node", work.path())?
        .reads(&kit.root)
        .reads(&project.dir)
        .reads(&kit.toolchains)
        .arg(&jco)
        .arg("componentize")
        .arg(&entry)
        .arg("--wit")
        .arg(
            kit.root
                .join("wit")
                .join(format!("v{}", kaizen_plugin_host::CONTRACT_VERSION)),
        )
        .args(["--world-name", "tool", "--bundle", "--bundle-config"])
        .arg(sdk.join("toolchain").join("rolldown.config.mjs"))
        .arg("-o")
        .arg(&built);
    // `fetch()` imports wasi:http, which only a plugin granted `http`
    // may; serving HTTP (`fetch-event`) is never wanted.
    jco_cmd = match project.manifest.capabilities.http.is_empty() {
        true => jco_cmd.args(["--disable", "http", "fetch-event"]),
        false => jco_cmd.args(["--disable", "fetch-event"]),
    };
    jco_cmd
        .run(
            kit,
            &format!("componentizing {main}"),
            "the error above names the cause",
        )
        .await?;
    project.take(&built)
}

/// `node --test` in the project (it carries its copy of the kit).
pub async fn test(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    Step::new("node", &project.dir)?
        .arg("--test")
        .tests(kit)
        .await
}

/// jco, installed from the kit's lock file into the toolchain cache.
async fn toolchain(sdk: &Path, kit: &Kit) -> anyhow::Result<PathBuf> {
    let pins = sdk.join("toolchain");
    let lock =
        std::fs::read(pins.join("package-lock.json")).context("the kit's package-lock.json")?;
    let hash = blake3::hash(&lock).to_hex();
    let dir = kit.toolchains.join(format!("js-{}", &hash[..16]));
    let what = "jco and componentize-js (npm)";
    let dir = installed(&dir, what, &kit.notices, async |dir: &Path| {
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(pins.join(file), dir.join(file))?;
        }
        Step::new("npm", dir)?
            .runs(&super::toolchain::on_path("node").unwrap_or_default())
            .downloads()
            .args([
                "ci",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .run(
                kit,
                "npm ci",
                "is the npm registry reachable? Install Node.js 20.19+ with npm if `npm` is missing",
            )
            .await
            .map(drop)
    })
    .await?;
    Ok(dir.join("node_modules/@bytecodealliance/jco/dist/jco.js"))
}

/// The project's module: package.json's `main`, else the first of
/// `tool.js`, `tool.ts`, `index.js`, `index.ts`.
fn main_module(dir: &Path) -> anyhow::Result<String> {
    let declared = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|package| package["main"].as_str().map(str::to_string));
    let main = declared.or_else(|| {
        MODULES
            .iter()
            .find(|name| dir.join(name).is_file())
            .map(|name| name.to_string())
    });
    match main {
        Some(main) if dir.join(&main).is_file() => Ok(main),
        Some(main) => bail!(
            "package.json names `{main}` as main, and {} has no such file",
            dir.display()
        ),
        None => bail!(
            "no module to build in {}: add tool.js (or name the module in package.json's \"main\")",
            dir.display()
        ),
    }
}

/// The toolchain's bundler needs Node ^20.19 or 22.12+.
async fn check_node(containment: &Containment) -> anyhow::Result<()> {
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let output = Step::new("node", scratch.path())
        .map_err(|_| {
            anyhow::anyhow!("node is not on PATH; install Node.js 20.19 or newer (with npm)")
        })?
        .arg("--version")
        .output(containment)
        .await?;
    let version = String::from_utf8_lossy(&output.stdout);
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let ok = (major == 20 && minor >= 19) || (major == 22 && minor >= 12) || major > 22;
    if !ok {
        bail!(
            "Node {} is too old to build JavaScript plugins: the toolchain needs 20.19+ or 22.12+",
            version.trim()
        );
    }
    Ok(())
}
