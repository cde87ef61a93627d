//! An external runtime: a vendor's agent CLI run as a child process in its
//! non-interactive JSON mode, its flags set from Kaizen's limits and
//! permission mode, and its event stream read into Kaizen's events and
//! result.

use crate::adapter::{
    Availability, ExecuteFuture, Execution, ExecutionContext, McpServer, RuntimeAdapter,
    RuntimeError,
};
use crate::capabilities::{CostReporting, RuntimeCapabilities, Vendor};
use crate::child::{self, ChildSpec, Stop};
use crate::normalize::{RunSoFar, StreamParser, first_line};
use kaizen_llm::PriceTable;
use kaizen_protocol::{CancellationToken, Event, Observer, Status};
use kaizen_sandbox::launcher::{self, Unconfined};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Variables every CLI gets, when set: what a program needs to run at all.
const BASIC_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
];

/// How long `--version` may take before the CLI counts as broken.
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// What must happen once a CLI's run has ended, before its scratch
/// directory goes (keeping what it wrote into files it was lent).
pub(crate) type AfterRun = Box<dyn FnOnce() -> Result<(), String> + Send>;

/// How one CLI is run.
#[derive(Default)]
pub(crate) struct Invocation {
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, over what it inherits.
    pub env: BTreeMap<String, String>,
    /// What could not be mapped onto its flags, one sentence each.
    pub notes: Vec<String>,
    /// What to do when it has ended, however it ended.
    pub after: Option<AfterRun>,
}

/// What one vendor's CLI is: its names, where to get it, what it can do
/// and the variables it is given.
#[derive(Debug)]
pub(crate) struct CliInfo {
    /// The runtime's name.
    pub name: &'static str,
    /// The program, looked up on `PATH`.
    pub program: &'static str,
    /// Its npm package, for the user to install.
    pub package: &'static str,
    /// The vendor whose models it uses.
    pub vendor: Vendor,
    /// The model it uses when none is named.
    pub default_model: &'static str,
    /// Its built-in tools.
    pub tools: &'static [&'static str],
    /// How it confines the commands it runs.
    pub sandbox: &'static str,
    /// How its cost is known.
    pub cost: CostReporting,
    /// The largest context it works with, in tokens.
    pub max_context_tokens: u64,
    /// The variables of the caller's environment it is given besides the
    /// basic ones: its own vendor's key, base URL and configuration.
    pub env_vars: &'static [&'static str],
}

impl CliInfo {
    /// What it can do: each of these CLIs connects MCP servers, streams
    /// its events and continues sessions.
    fn capabilities(&self) -> RuntimeCapabilities {
        RuntimeCapabilities {
            vendors: vec![self.vendor],
            default_model: self.default_model.to_string(),
            tools: self.tools.iter().map(|tool| tool.to_string()).collect(),
            sandbox: vec![self.sandbox.to_string()],
            mcp: true,
            streaming: true,
            cost: self.cost,
            resume: true,
            max_context_tokens: self.max_context_tokens,
        }
    }

    /// Why it cannot run here when its program is missing.
    fn not_on_path(&self) -> String {
        format!(
            "`{}` is not on PATH (install it with `npm install -g {}`)",
            self.program, self.package
        )
    }
}

/// One vendor's CLI.
pub(crate) trait Cli: Send + Sync {
    /// What it is.
    fn info(&self) -> &'static CliInfo;
    /// The flags and environment for `context`, using `model` and a
    /// scratch directory of its own for files it must be given.
    fn invocation(
        &self,
        context: &ExecutionContext,
        model: &str,
        scratch: &Path,
    ) -> Result<Invocation, String>;
    /// A reader for its output of the run of `context`.
    fn parser(&self, context: &ExecutionContext) -> Box<dyn StreamParser>;
}

/// A [`RuntimeAdapter`] over a [`Cli`].
pub struct ExternalRuntime {
    cli: Box<dyn Cli>,
    prices: PriceTable,
    scratch_root: Option<PathBuf>,
}

impl ExternalRuntime {
    pub(crate) fn new(
        cli: Box<dyn Cli>,
        prices: PriceTable,
        scratch_root: Option<PathBuf>,
    ) -> Self {
        Self {
            cli,
            prices,
            scratch_root,
        }
    }

    /// A private directory for the files one run is given (an MCP config,
    /// settings), removed when the run ends.
    fn scratch(&self) -> std::io::Result<tempfile::TempDir> {
        let prefix = format!("{}-", self.cli.info().name);
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        match &self.scratch_root {
            Some(root) => {
                std::fs::create_dir_all(root)?;
                builder.tempdir_in(root)
            }
            None => builder.tempdir(),
        }
    }

    /// The program on the `PATH` of `env`.
    fn locate(&self, env: &BTreeMap<String, String>) -> Option<PathBuf> {
        let path = env.get("PATH")?;
        std::env::split_paths(path)
            .map(|dir| dir.join(self.cli.info().program))
            .find(|candidate| is_executable(candidate))
    }

    /// Its environment: the basic variables and its own, nothing else.
    fn child_env(&self, context: &ExecutionContext) -> BTreeMap<String, String> {
        BASIC_VARS
            .iter()
            .chain(self.cli.info().env_vars)
            .filter_map(|name| {
                context
                    .env
                    .get(*name)
                    .map(|value| (name.to_string(), value.clone()))
            })
            .collect()
    }

    async fn run(
        &self,
        context: &ExecutionContext,
        observer: &dyn Observer,
        interrupt: &CancellationToken,
    ) -> Result<Execution, RuntimeError> {
        let info = self.cli.info();
        let name = info.name;
        let program = self
            .locate(&context.env)
            .ok_or_else(|| RuntimeError::Unavailable {
                runtime: name.to_string(),
                why: info.not_on_path(),
            })?;
        let capabilities = info.capabilities();
        let model = context
            .model
            .clone()
            .unwrap_or_else(|| capabilities.default_model.clone());
        if !capabilities.serves(&model) {
            return Err(RuntimeError::Unsupported {
                runtime: name.to_string(),
                why: format!("it does not serve the model `{model}`"),
            });
        }
        let failed = |why: String| RuntimeError::Failed {
            runtime: name.to_string(),
            why,
        };
        let scratch = self
            .scratch()
            .map_err(|err| failed(format!("cannot make a scratch directory: {err}")))?;
        let invocation = self
            .cli
            .invocation(context, &model, scratch.path())
            .map_err(|why| RuntimeError::Unsupported {
                runtime: name.to_string(),
                why,
            })?;
        let mut env = self.child_env(context);
        env.extend(invocation.env);
        let spec = ChildSpec {
            program,
            args: invocation.args,
            env,
            cwd: context.workspace.clone(),
        };
        let mut parser = self.cli.parser(context);
        let mut run = RunSoFar::new(&model, context.workspace.display().to_string());
        let mut stray = Vec::new();
        let limits = &context.limits;
        let prices = &self.prices;
        let ended = child::run(&spec, limits.timeout, interrupt, |line| {
            let Ok(value) = serde_json::from_str(line) else {
                if !line.trim().is_empty() && stray.len() < 20 {
                    stray.push(line.to_string());
                }
                return None;
            };
            parser.line(&value, &mut run, &mut |event: Event| {
                observer.on_event(&event)
            });
            over_limit(&run, limits, prices)
        })
        .await
        .map_err(|err| failed(format!("cannot start {}: {err}", spec.program.display())))?;
        let (status, error) = match ended.stopped {
            Some(stop) => (stop.status, Some(stop.message)),
            None => match run.ended.take() {
                Some(verdict) => verdict,
                None if ended.code == Some(0) => (Status::Complete, None),
                None => (
                    Status::Error,
                    Some(exit_error(name, ended.code, &ended.stderr, &stray)),
                ),
            },
        };
        let mut notes = invocation.notes;
        if let Some(after) = invocation.after
            && let Err(why) = after()
        {
            notes.push(format!(
                "{name} kept state Kaizen could not hand back: {why}"
            ));
        }
        let result = run.result(name, status, error, ended.duration, prices);
        if result.cost_estimated && self.prices.price(&result.model_used).is_none() {
            notes.push(format!(
                "{name} reports no cost and no price is known for `{}`: its cost is counted as 0",
                result.model_used
            ));
        }
        Ok(Execution { result, notes })
    }
}

/// MCP servers as Claude Code's and Gemini CLI's settings name them:
/// `{name: {command, args, env}}`.
pub(crate) fn mcp_servers(servers: &[McpServer]) -> serde_json::Value {
    servers
        .iter()
        .map(|server| {
            let entry = serde_json::json!({
                "command": server.command,
                "args": server.args,
                "env": server.env,
            });
            (server.name.clone(), entry)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The limit `run` has crossed, if any: cycles as the runtime counted
/// them, or the budget on the cost it reported or Kaizen estimated.
fn over_limit(
    run: &RunSoFar,
    limits: &crate::adapter::Limits,
    prices: &PriceTable,
) -> Option<Stop> {
    if run.ended.is_some() {
        return None;
    }
    if run.cycles > limits.max_cycles {
        return Some(Stop {
            status: Status::MaxCycles,
            message: format!(
                "the run reached its limit of {} model calls",
                limits.max_cycles
            ),
        });
    }
    let (cost, _) = run.cost(prices);
    match cost {
        Some(cost) if limits.budget_usd > 0.0 && cost > limits.budget_usd => Some(Stop {
            status: Status::BudgetExceeded,
            message: format!(
                "the run spent ${cost:.4}, over its budget of ${:.4}",
                limits.budget_usd
            ),
        }),
        _ => None,
    }
}

/// Why a CLI that exited with `code` failed, from what it said.
fn exit_error(name: &str, code: Option<i32>, stderr: &str, stray: &[String]) -> String {
    let said = stderr
        .lines()
        .chain(stray.iter().map(String::as_str))
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(first_line);
    let how = match code {
        Some(code) => format!("exited with code {code}"),
        None => "was killed by a signal".to_string(),
    };
    match said {
        Some(said) => format!("{name} {how}: {said}"),
        None => format!("{name} {how}"),
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

impl RuntimeAdapter for ExternalRuntime {
    fn name(&self) -> &str {
        self.cli.info().name
    }

    fn capabilities(&self) -> RuntimeCapabilities {
        self.cli.info().capabilities()
    }

    fn availability(&self, env: &BTreeMap<String, String>) -> Availability {
        let Some(path) = self.locate(env) else {
            return Availability::missing(self.cli.info().not_on_path());
        };
        match version(&path, env) {
            Ok(version) => Availability::ready(Some(path), Some(version)),
            Err(why) => Availability {
                installed: false,
                path: Some(path),
                version: None,
                problem: Some(why),
            },
        }
    }

    fn execute<'a>(
        &'a self,
        context: &'a ExecutionContext,
        observer: &'a dyn Observer,
        interrupt: &'a CancellationToken,
    ) -> ExecuteFuture<'a> {
        Box::pin(self.run(context, observer, interrupt))
    }
}

/// What `path --version` says, first line, with only the basic variables
/// set (no key is needed to say a version).
fn version(path: &Path, env: &BTreeMap<String, String>) -> Result<String, String> {
    let mut child = launcher::unconfined(Unconfined::OtherAgent, path)
        .arg("--version")
        .envs(
            BASIC_VARS
                .iter()
                .filter_map(|name| env.get(*name).map(|value| (*name, value))),
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|err| format!("cannot run {}: {err}", path.display()))?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > VERSION_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{} --version` did not answer in {}s",
                    path.display(),
                    VERSION_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(err) => return Err(err.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|err| err.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    match (out.status.success(), text.lines().next()) {
        (true, Some(line)) => Ok(line.trim().to_string()),
        _ => Err(format!(
            "`{} --version` failed ({})",
            path.display(),
            out.status
        )),
    }
}
