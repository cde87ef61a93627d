//! Installing and running the tools a kit builds with, in the OS sandbox.
//!
//! Each pinned tool goes once into a directory of the toolchain cache
//! (under a lock, so that two builds do not install it twice). Every
//! program a kit runs — an installer, a compiler, the project's tests — is
//! a [`Step`]: it runs in the sandbox with nothing of the session and
//! nothing of the user's home but the toolchain it runs (its install
//! prefix, readable), the directories it installs or builds into
//! (writable), the network only for an install, and a cleared environment
//! with only the variables it names (never a provider key). Its working
//! directory is one Kaizen chose, never the repository Kaizen was started
//! in, so nothing there can stand in for the tool's own modules.

use super::Kit;
use crate::notices::Notices;
use anyhow::{Context as _, bail};
use kaizen_sandbox::{Command, Containment, Sandbox, Scope, Widening};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Marks a tool's directory as completely installed.
const COMPLETE: &str = ".complete";

/// Variables a toolchain reads to find itself, passed on when the user
/// set them (the sandbox's `HOME` is its own, so the defaults under the
/// user's home are passed explicitly by [`Step::rust`] and
/// [`Step::python_env`]).
const TOOLCHAIN_VARS: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_JOBS",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "WASI_SYSROOT",
];

/// Variables that reach a package registry through a proxy, passed on to
/// an install.
const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
];

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

/// `dir`, with `what` installed into it by `install` (given `dir`, made
/// empty) unless an earlier install completed; a half-done install is
/// started over. `notices` hears that an install starts: it takes a while.
pub async fn installed(
    dir: &Path,
    what: &str,
    notices: &Notices,
    install: impl AsyncFnOnce(&Path) -> anyhow::Result<()>,
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
    let lock = tokio::task::spawn_blocking(move || lock.lock().map(|()| lock))
        .await?
        .context("waiting for another install to finish")?;
    if is_installed(dir) {
        return Ok(dir.to_path_buf());
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("removing the unfinished install in {}", dir.display()))?;
    }
    std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    notices.note(format!(
        "installing {what} into {} (first build only; this takes a while)",
        dir.display()
    ));
    install(dir)
        .await
        .with_context(|| format!("installing {what}"))?;
    std::fs::write(dir.join(COMPLETE), what)?;
    drop(lock);
    Ok(dir.to_path_buf())
}

/// One program a kit runs, in the OS sandbox.
#[derive(Debug, Clone)]
pub struct Step {
    program: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    reads: Vec<PathBuf>,
    writes: Vec<PathBuf>,
    network: bool,
}

impl Step {
    /// `program` (a name looked up on the user's `PATH`, or a path),
    /// working in `cwd`, which it may write. The program's install prefix
    /// (the directory above its `bin`, where it was found and where it
    /// really is) is readable and its directory is first on `PATH`.
    pub fn new(program: impl AsRef<OsStr>, cwd: &Path) -> anyhow::Result<Self> {
        let program = program.as_ref();
        let found = match Path::new(program).components().count() > 1 {
            true => PathBuf::from(program),
            false => on_path(&program.to_string_lossy()).with_context(|| {
                format!(
                    "`{}` is not installed or not on PATH",
                    program.to_string_lossy()
                )
            })?,
        };
        let mut step = Self {
            program: found.clone(),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            reads: Vec::new(),
            writes: vec![cwd.to_path_buf()],
            network: false,
        };
        step.reads_program(&found);
        let dir = found.parent().map(Path::to_path_buf).unwrap_or_default();
        step.env.push((
            "PATH".into(),
            format!("{}:{}", dir.display(), kaizen_sandbox::SANDBOX_PATH),
        ));
        for name in TOOLCHAIN_VARS {
            if let Some(value) = std::env::var_os(name).filter(|value| !value.is_empty()) {
                step.env
                    .push((name.to_string(), value.to_string_lossy().into_owned()));
            }
        }
        Ok(step)
    }

    /// Makes what `program` runs readable: its install prefix (the
    /// directory above its `bin`), where it was found and where it really
    /// is (a link into a version's directory); a program not in a `bin`
    /// directory, its own directory.
    fn reads_program(&mut self, program: &Path) {
        let prefix = |path: &Path| {
            let dir = path.parent()?;
            let in_bin = dir.file_name().is_some_and(|name| {
                matches!(name.to_str(), Some("bin" | "sbin" | "shims" | ".bin"))
            });
            match in_bin {
                true => dir.parent().map(Path::to_path_buf),
                false => Some(dir.to_path_buf()),
            }
        };
        self.reads.extend(prefix(program));
        if let Ok(real) = program.canonicalize() {
            self.reads.extend(prefix(&real));
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_string_lossy().into_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Self {
        for arg in args {
            self = self.arg(arg);
        }
        self
    }

    /// Sets a variable.
    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Self {
        self.env.retain(|(key, _)| key != name);
        self.env.push((
            name.to_string(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
        self
    }

    /// Lets it read `dir` (the kit's files, the project).
    pub fn reads(mut self, dir: impl Into<PathBuf>) -> Self {
        self.reads.push(dir.into());
        self
    }

    /// Lets it read and write `dir` (where it installs or builds).
    pub fn writes(mut self, dir: impl Into<PathBuf>) -> Self {
        self.writes.push(dir.into());
        self
    }

    /// Lets it run `program` too (a compiler a build script calls): its
    /// prefix is readable.
    pub fn runs(mut self, program: &Path) -> Self {
        self.reads_program(program);
        self
    }

    /// Lets it reach the package registries (an install), with the user's
    /// proxy settings.
    pub fn downloads(mut self) -> Self {
        self.network = true;
        for name in PROXY_VARS {
            if let Ok(value) = std::env::var(name) {
                self.env.push((name.to_string(), value));
            }
        }
        self
    }

    /// Where Rust's toolchains and crates are (`RUSTUP_HOME`, readable,
    /// and `CARGO_HOME`, writable for downloads: the user's, or the
    /// defaults under the user's home), for cargo, rustc and rustup.
    pub fn rust(mut self) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let var = |name: &str, default: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|home| home.join(default)))
        };
        if let Some(cargo) = var("CARGO_HOME", ".cargo") {
            self = self.env("CARGO_HOME", &cargo).writes(cargo);
        }
        if let Some(rustup) = var("RUSTUP_HOME", ".rustup") {
            self = self.env("RUSTUP_HOME", &rustup).reads(rustup);
        }
        if let Some(target) = std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
            let target = PathBuf::from(target);
            // Cargo makes it; the sandbox grants only what exists.
            let _ = std::fs::create_dir_all(&target);
            self = self.writes(target);
        }
        self
    }

    /// pyenv's root, when the Python found is one of its shims: they find
    /// their versions through it (by default under the user's home).
    pub fn python_env(mut self) -> Self {
        let has_root = self.env.iter().any(|(key, _)| key == "PYENV_ROOT");
        let pyenv = std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".pyenv"))
            .filter(|root| self.program.starts_with(root));
        if let (false, Some(root)) = (has_root, pyenv) {
            self = self.env("PYENV_ROOT", &root);
        }
        self.env("PYTHONDONTWRITEBYTECODE", "1")
    }

    /// Runs it in the kit's containment to its end; its diagnostics (its
    /// standard error, and its standard output when it fails) go to the
    /// kit's notices as output, never to a run's output, which a build for
    /// a run must keep clean. `what` says what it was doing, `fix` what to
    /// do when it fails. Its standard output is returned too.
    pub async fn run(self, kit: &Kit, what: &str, fix: &str) -> anyhow::Result<Vec<u8>> {
        let out = self.output(&kit.containment).await?;
        kit.notices
            .output(String::from_utf8_lossy(&out.stderr).into_owned());
        if out.exit_code != Some(0) {
            kit.notices
                .output(String::from_utf8_lossy(&out.stdout).into_owned());
            let how = match (out.exit_code, out.signal) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "no exit status".to_string(),
            };
            bail!("{what} failed ({how}); {fix}");
        }
        Ok(out.stdout)
    }

    /// Runs a project's own tests as [`Step::run`] does: a failure names
    /// them.
    pub async fn tests(self, kit: &Kit) -> anyhow::Result<()> {
        self.run(kit, "the tests", "fix what the failures above say")
            .await
            .map(drop)
    }

    /// Runs it in `containment` to its end and gives back what it did,
    /// whatever its exit code.
    pub async fn output(self, containment: &Containment) -> anyhow::Result<kaizen_sandbox::Output> {
        let widening = Widening::Toolchain {
            reads: self.reads,
            writes: self.writes,
            network: self.network,
        };
        let policy = containment.policy(Scope::default(), &[widening]);
        let sandbox =
            Sandbox::new(policy).context("starting the OS sandbox for a toolchain step")?;
        let program = self.program.display().to_string();
        sandbox
            .run(Command {
                program: program.clone(),
                args: self.args,
                cwd: Some(self.cwd),
                env: self.env,
                ..Command::default()
            })
            .await
            .with_context(|| format!("cannot run `{program}`"))
    }
}

/// The path of `program` on the user's `PATH`.
pub fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}
