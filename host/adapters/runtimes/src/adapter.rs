//! What a runtime is to Kaizen: something that takes a task with limits and
//! a permission mode, streams Kaizen's events while it works, and ends with
//! Kaizen's result object.

use crate::capabilities::RuntimeCapabilities;
use kaizen_protocol::{CancellationToken, Observer, PermissionMode, RunResult};
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

/// The limits of one execution, as `kaizen run` takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Model calls at most.
    pub max_cycles: u32,
    /// USD at most; `0` or less means no bound.
    pub budget_usd: f64,
    /// Wall-clock time at most.
    pub timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_cycles: 50,
            budget_usd: 0.0,
            timeout: None,
        }
    }
}

/// An MCP server the runtime should connect to (stdio).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Its name, which prefixes its tools.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables it is given.
    pub env: BTreeMap<String, String>,
}

/// Everything a runtime is told about one task.
#[derive(Debug, Clone)]
pub struct ExecutionContext {
    /// The task, as the user wrote it.
    pub task: String,
    /// The directory the runtime works in.
    pub workspace: PathBuf,
    /// Whether the user trusts the workspace's own configuration. A
    /// runtime in an untrusted workspace is kept from the settings, hooks
    /// and MCP servers the workspace would give it, where it can be.
    pub trusted_workspace: bool,
    /// The model; the runtime's default when `None`.
    pub model: Option<String>,
    /// Cycles, budget and time.
    pub limits: Limits,
    /// What may run without asking (nobody can be asked: a child runtime
    /// runs without a terminal, so what would ask is refused).
    pub permission_mode: PermissionMode,
    /// Rules that let calls run, in Claude Code's syntax.
    pub allowed_tools: Vec<String>,
    /// Rules that refuse calls, in Claude Code's syntax.
    pub disallowed_tools: Vec<String>,
    /// Instructions added to the runtime's own system prompt.
    pub instructions: Option<String>,
    /// MCP servers to connect.
    pub mcp_servers: Vec<McpServer>,
    /// A session of the runtime's to continue, with the task as its next
    /// message.
    pub resume: Option<Resume>,
    /// The environment the runtime may read from: each adapter passes its
    /// child only the variables it names (its own vendor's key, base URL
    /// and config directory, and the basics such as `PATH` and `HOME`), so
    /// another vendor's key never reaches it.
    pub env: BTreeMap<String, String>,
}

impl ExecutionContext {
    /// A context for `task` in `workspace`, with default limits, the
    /// default permission mode and the process's environment.
    pub fn new(task: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        Self {
            task: task.into(),
            workspace: workspace.into(),
            trusted_workspace: false,
            model: None,
            limits: Limits::default(),
            permission_mode: PermissionMode::Default,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            instructions: None,
            mcp_servers: Vec::new(),
            resume: None,
            env: std::env::vars().collect(),
        }
    }
}

/// A runtime's session to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The runtime's own id for it.
    pub session: String,
    /// The tokens its runs so far used, input and output (a runtime that
    /// reports a session's running totals, as Codex does, is counted from
    /// there).
    pub tokens: (u64, u64),
}

/// Whether a runtime can run here.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Availability {
    /// Whether it is there.
    pub installed: bool,
    /// The program that runs it, when found.
    pub path: Option<PathBuf>,
    /// Its version, as it reports it.
    pub version: Option<String>,
    /// Why it cannot run, when it cannot.
    pub problem: Option<String>,
}

impl Availability {
    /// Ready to run, from `path`, at `version`.
    pub fn ready(path: Option<PathBuf>, version: Option<String>) -> Self {
        Self {
            installed: true,
            path,
            version,
            problem: None,
        }
    }

    /// Not usable, because of `problem`.
    pub fn missing(problem: impl Into<String>) -> Self {
        Self {
            installed: false,
            path: None,
            version: None,
            problem: Some(problem.into()),
        }
    }
}

/// Why an execution did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The runtime is not installed or not configured; nothing ran.
    #[error("{runtime} is not available: {why}")]
    Unavailable {
        /// The runtime.
        runtime: String,
        /// What is missing, and how to get it.
        why: String,
    },
    /// The context asks for something the runtime cannot do; nothing ran.
    #[error("{runtime} cannot run this task: {why}")]
    Unsupported {
        /// The runtime.
        runtime: String,
        /// What it cannot do.
        why: String,
    },
    /// The runtime could not be started or broke before doing any work.
    #[error("{runtime} failed before doing any work: {why}")]
    Failed {
        /// The runtime.
        runtime: String,
        /// What it said.
        why: String,
    },
}

/// What an execution hands back: Kaizen's result, and what the adapter
/// could not map onto the runtime (the user hears of it).
#[derive(Debug, Clone)]
pub struct Execution {
    /// The result object, as `kaizen run` prints it.
    pub result: RunResult,
    /// Settings the runtime could not honour as asked, one sentence each.
    pub notes: Vec<String>,
}

impl Execution {
    /// Whether the runtime failed without doing anything of the task: an
    /// error before any tool call or output (the selector may then fall
    /// back). A run stopped by a limit spent what the user allowed, and
    /// is not tried again elsewhere.
    pub fn did_no_work(&self) -> bool {
        self.result.status == kaizen_protocol::Status::Error
            && self.result.tool_calls.is_empty()
            && self.result.output.is_empty()
    }
}

/// The future of an execution.
pub type ExecuteFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Execution, RuntimeError>> + Send + 'a>>;

/// An agent runtime.
pub trait RuntimeAdapter: Send + Sync {
    /// Its name in results and on the command line.
    fn name(&self) -> &str;

    /// What it can do.
    fn capabilities(&self) -> RuntimeCapabilities;

    /// Whether it can run here, given the environment the context would
    /// pass it.
    fn availability(&self, env: &BTreeMap<String, String>) -> Availability;

    /// Runs the task to the end, a limit, or `interrupt`, reporting
    /// Kaizen's events to `observer` as they happen (but not the final
    /// [`kaizen_protocol::Event::Result`], which the caller reports once it
    /// has settled which runtime's result stands).
    fn execute<'a>(
        &'a self,
        context: &'a ExecutionContext,
        observer: &'a dyn Observer,
        interrupt: &'a CancellationToken,
    ) -> ExecuteFuture<'a>;
}
