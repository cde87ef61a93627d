//! C plugins: clang with Debian's WASI sysroot compiles the kit, the
//! contract's bindings and the project's sources into a reactor module,
//! which becomes a component with WASI's reactor adapter. The bindings
//! (`wit-bindgen c`) and the wrapping (`wasm-tools component new`) run in
//! process, so clang and the sysroot are all a C author installs.

use super::toolchain::Step;
use super::{Kit, Project};
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};

/// What Debian 12 needs to build C plugins.
const PACKAGES: &str = "apt-get install -y clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32";
/// The generated bindings' name (`kaizen_world.c`), clear of the author's
/// `tool.c`.
const WORLD_NAME: &str = "kaizen_world";
/// The kit's sources that compile anywhere (JSON, serving a call).
const KIT_PURE: &[&str] = &["kaizen_json.c", "kaizen_tool.c"];

/// Builds the project's C sources into its component.
pub async fn build(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    let sdk = kit.root.join("sdk").join("c");
    let sources = sources(&project.dir, false)?;
    if sources.is_empty() {
        bail!(
            "{} has no C sources (*.c besides test_*.c)",
            project.dir.display()
        );
    }
    let cc = compiler()?;
    let work = tempfile::Builder::new()
        .prefix("kaizen-c-build-")
        .tempdir()
        .context("creating a build directory")?;
    let generated = work.path();
    let contract = kit
        .root
        .join("wit")
        .join(format!("v{}", kaizen_plugin_host::CONTRACT_VERSION));
    bindings(&contract, generated)?;
    let core = generated.join("core.wasm");
    let mut clang = Step::new(&cc, generated)?
        .reads(&kit.root)
        .reads(&project.dir)
        .args([
            "--target=wasm32-wasi",
            "-O2",
            "-std=c11",
            "-mexec-model=reactor",
        ])
        .args(["-Wall", "-Wextra"])
        .arg(format!("-I{}", sdk.join("include").display()))
        .arg(format!("-I{}", sdk.join("src").display()))
        .arg(format!("-I{}", generated.display()))
        // Rust's stack size for wasm32, placed first so an overflow traps
        // instead of overwriting static data.
        .args([
            "-Wl,--stack-first",
            "-Wl,-z,stack-size=1048576",
            "-Wl,--strip-debug",
        ]);
    if let Some(sysroot) = std::env::var_os("WASI_SYSROOT") {
        clang = clang
            .reads(PathBuf::from(&sysroot))
            .arg(format!("--sysroot={}", Path::new(&sysroot).display()));
    }
    clang
        .args(KIT_PURE.iter().map(|file| sdk.join("src").join(file)))
        .arg(sdk.join("src").join("kaizen_wasm.c"))
        .arg(generated.join(format!("{WORLD_NAME}.c")))
        .arg(generated.join(format!("{WORLD_NAME}_component_type.o")))
        .args(&sources)
        .arg("-o")
        .arg(&core)
        .run(
            kit,
            "compiling with clang",
            &format!(
                "fix the errors above; clang needs the WASI sysroot (on Debian 12: {PACKAGES})"
            ),
        )
        .await?;
    let module = std::fs::read(&core).context("reading the compiled module")?;
    let component = wit_component::ComponentEncoder::default()
        .validate(true)
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .and_then(|encoder| encoder.module(&module))
        .and_then(|mut encoder| encoder.encode())
        .map_err(|err| anyhow::anyhow!("making the component failed: {err:#}"))?;
    std::fs::write(&project.output, component)
        .with_context(|| format!("writing {}", project.output.display()))?;
    Ok(())
}

/// Compiles each `test_*.c` natively with the kit's portable sources and
/// the project's, and runs it.
pub async fn test(project: &Project, kit: &Kit) -> anyhow::Result<()> {
    let src = kit.root.join("sdk").join("c").join("src");
    let tests = sources(&project.dir, true)?;
    if tests.is_empty() {
        bail!("{} has no tests (test_*.c)", project.dir.display());
    }
    let sources = sources(&project.dir, false)?;
    let work = tempfile::tempdir().context("creating a build directory")?;
    let cc = std::env::var_os("HOST_CC").unwrap_or_else(|| "cc".into());
    for test in tests {
        let exe = work.path().join(test.file_stem().unwrap_or_default());
        Step::new(&cc, work.path())?
            .reads(&kit.root)
            .reads(&project.dir)
            .args(["-std=c11", "-g", "-O1", "-Wall", "-Wextra"])
            .arg(format!(
                "-I{}",
                src.parent().unwrap_or(&src).join("include").display()
            ))
            .args(KIT_PURE.iter().map(|file| src.join(file)))
            .arg(src.join("kaizen_native.c"))
            .args(&sources)
            .arg(&test)
            .arg("-lm")
            .arg("-o")
            .arg(&exe)
            .run(
                kit,
                &format!("compiling {}", test.display()),
                "fix the errors above (a C compiler, `cc`, is needed; HOST_CC names another)",
            )
            .await?;
        Step::new(&exe, &project.dir)?
            .run(
                kit,
                &format!("{}", test.display()),
                "fix what the failures above say",
            )
            .await?;
    }
    Ok(())
}

/// The project's `*.c` files: its tests (`test_*.c`), or the others.
fn sources(dir: &Path, tests: bool) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|n| n.ends_with(".c")) else {
            continue;
        };
        if name.starts_with("test_") == tests {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// `$CC`, else clang-19, else clang.
fn compiler() -> anyhow::Result<std::ffi::OsString> {
    if let Some(cc) = std::env::var_os("CC").filter(|cc| cc != "cc" && !cc.is_empty()) {
        return Ok(cc);
    }
    ["clang-19", "clang"]
        .into_iter()
        .find(|cc| super::toolchain::on_path(cc).is_some())
        .map(Into::into)
        .with_context(|| format!("clang is not installed; C plugins need clang with a WASI sysroot (on Debian 12: {PACKAGES})"))
}

/// Writes the C bindings of the contract's `tool` world into `dir`.
fn bindings(contract: &Path, dir: &Path) -> anyhow::Result<()> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_path(contract)
        .map_err(|err| anyhow::anyhow!("reading the contract {}: {err:#}", contract.display()))?;
    let world = resolve
        .select_world(&[package], Some("tool"))
        .map_err(|err| anyhow::anyhow!("the contract has no `tool` world: {err:#}"))?;
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts {
        rename_world: Some(WORLD_NAME.into()),
        ..Default::default()
    }
    .build()
    .generate(&mut resolve, world, &mut files)
    .map_err(|err| anyhow::anyhow!("generating the C bindings: {err:#}"))?;
    for (name, bytes) in files.iter() {
        std::fs::write(dir.join(name), bytes).with_context(|| format!("writing {name}"))?;
    }
    Ok(())
}
