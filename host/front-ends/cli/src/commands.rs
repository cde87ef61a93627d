//! The command line: every command and its flags, as clap reads them.

use crate::run_args::{RunArgs, WorkspaceArgs};
use crate::{approve_cmd, eval_cmd, memory_cmd, worker_cmd};
use clap::{Parser, Subcommand};
use kaizen_app::kits;
use kaizen_app::permission_flags::PermissionArgs;
use std::path::PathBuf;

/// Kaizen: an agent runtime whose every tool is a sandboxed WebAssembly component.
#[derive(Parser)]
#[command(name = "kaizen", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a task to completion: the model thinks, calls tools, and stops when
    /// it answers without calling any. The task comes from stdin when omitted.
    ///
    /// Providers come from the environment: OPENAI_API_KEY (and
    /// OPENAI_BASE_URL, including /v1, for compatible servers),
    /// ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL), or OLLAMA_HOST. Exit codes:
    /// 0 complete, 1 error, 2 usage, 3 a limit was reached, 130 interrupted.
    Run(Box<RunArgs>),
    /// Run task folders (task.toml, workspace/, check.sh) with each
    /// planner and report, per task and planner, whether the check passed,
    /// the model calls, tokens and cost. Each run is `kaizen run` in a
    /// fresh copy of the task's workspace, on the model the flags and
    /// environment choose.
    Eval(Box<eval_cmd::EvalArgs>),
    /// Serve sessions' turns for a Restate cluster (`kaizen run --cluster`):
    /// each turn runs here with this machine's configuration, keys,
    /// plugins and sandbox, its steps journaled by the engine so that
    /// another worker can take over a turn whose worker was lost. Needs
    /// the session store ($KAIZEN_HOME/sessions) shared with the other
    /// workers and the submitters.
    Worker(worker_cmd::WorkerArgs),
    /// Answer what a session's turn on a cluster waits on: a tool call to
    /// approve, or a plugin's questions. The answer goes through the
    /// engine, so it holds even if the worker that asked was lost.
    Approve(approve_cmd::ApproveArgs),
    /// The agent runtimes `kaizen run --runtime` can use: whether each is
    /// installed here, its version and what it can do.
    Runtimes {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List, inspect and check plugins.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// List the tools the loaded plugins provide.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// The OS sandbox that programs run in.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Sessions kept under $KAIZEN_HOME/sessions: every run's log,
    /// checkpoints and the files its tools changed.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Kaizen over the Model Context Protocol.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// What sessions learned (the Memory tool saves it; each session
    /// starts with the entries most relevant to its task): the user's, and
    /// the current directory's project's.
    #[command(subcommand)]
    Memory(memory_cmd::MemoryCommand),
    /// The audit hook's logs: `kaizen audit verify [SESSION|last|FILE]`
    /// checks that no line was changed, removed or moved since it was
    /// written (exit 1 when one was).
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Trust a workspace's own configuration (its kaizen.toml, the plugins
    /// in .kaizen/plugins, .claude/ settings and .mcp.json) as it is now.
    /// Until then a workspace's config can only lower limits; trust is
    /// asked again whenever those files change.
    Trust {
        /// The workspace (default: the current directory).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Take the workspace's trust back instead.
        #[arg(long, conflicts_with = "list")]
        revoke: bool,
        /// List the trusted workspaces instead.
        #[arg(long)]
        list: bool,
    },
    /// Put back the files a session's Write, Edit, MultiEdit and
    /// NotebookEdit calls changed, as they were before cycle --to (before
    /// the session, by default). Files changed by Bash or other programs
    /// are not tracked and stay as they are.
    Rewind {
        /// The session (an id, or `last`).
        id: String,
        /// Restore the files as they were before this cycle's tool calls.
        #[arg(long, value_name = "CYCLE", default_value_t = 1)]
        to: u32,
        /// Only show what would be restored.
        #[arg(long)]
        dry_run: bool,
        /// Also start a new session from the conversation as it was before
        /// cycle --to, to go on with `kaizen run --resume NEW_ID`.
        #[arg(long)]
        fork: bool,
    },
}

#[derive(Subcommand)]
pub enum McpCommand {
    /// Serve the workspace's tools (built-ins and plugins) to an MCP
    /// client on stdin/stdout: each call passes the same permission rules
    /// and hooks as `kaizen run`, each tool in its grant, each program in
    /// the OS sandbox. A call that would ask is refused, saying which rule
    /// or flag allows it.
    Serve {
        #[command(flatten)]
        workspace: WorkspaceArgs,
        #[command(flatten)]
        permissions: PermissionArgs,
        /// Serve over MCP's streamable HTTP at http://ADDR/mcp instead of
        /// stdio, one kaizen session per MCP session. Loopback only, unless
        /// the user's config sets a token ([mcp] serve-token-env).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
    },
    /// Start the MCP servers a run would use ([mcp_servers] of your
    /// config, a trusted workspace's .mcp.json), each in its OS sandbox,
    /// and show their state, grant and tools.
    List {
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain of one session's log (an id, `last`, or a
    /// file), or of every log.
    Verify {
        /// The session, `last`, or a log file (default: every log).
        which: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// Every session, newest first: id, start, status, cycles, cost, task.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A session's transcript: every run, model turn, tool call and result.
    Show {
        /// The session (an id, or `last`).
        id: String,
        /// Print the log's entries as JSON, one per line.
        #[arg(long)]
        json: bool,
    },
    /// Delete a session and everything kept for it.
    Rm {
        /// The session (an id, or `last`).
        id: String,
    },
    /// Compact a session's conversation now: its older turns summarised by
    /// the `compaction` model role (as a run does when the model's window
    /// fills up), so that the next `kaizen run --resume` sends less.
    Compact {
        /// The session (an id, or `last`).
        id: String,
        /// The model that summarises (default: the `compaction` role's,
        /// else the session's).
        #[arg(long)]
        model: Option<String>,
        /// Print the compaction as JSON.
        #[arg(long)]
        json: bool,
        /// The plugins whose PreCompact hooks run (the session's workspace
        /// by default).
        #[command(flatten)]
        workspace: WorkspaceArgs,
        #[command(flatten)]
        permissions: PermissionArgs,
    },
    /// Delete the sessions not updated for a while.
    Prune {
        /// Age, e.g. 30d, 12h, 90m.
        #[arg(long, value_name = "AGE", value_parser = kaizen_app::sessions::parse_age)]
        older_than: std::time::Duration,
    },
}

#[derive(Subcommand)]
pub enum SandboxCommand {
    /// Report which sandbox features this machine supports, found by
    /// trying each one. Exits 1 when one is missing: programs then refuse
    /// to run unless `[sandbox] allow-degraded = true` is in the user's
    /// config.
    Check,
}

#[derive(Subcommand)]
pub enum PluginsCommand {
    /// Every plugin found, with its tools, what it requested, what it was
    /// granted, and why it failed to load if it did.
    List {
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Install a plugin directory into your plugin directory (or the
    /// workspace's) and pin its digests in that directory's plugins.lock:
    /// a later change to its files is refused until it is added again.
    Add {
        /// The plugin's directory (with plugin.toml and the built component).
        path: PathBuf,
        /// Into the workspace's .kaizen/plugins instead of yours.
        #[arg(long)]
        workspace: bool,
        /// The workspace (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Write a new plugin project that builds as it is: manifest, source
    /// with one example tool, build file and a test.
    New {
        /// The plugin's name (lowercase, digits and `-`), e.g. word-count.
        name: String,
        /// The language.
        #[arg(long, value_enum)]
        lang: kits::Lang,
        /// Where to write it (default: ./NAME).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Build the plugin project in DIR (default: here) with its language's
    /// toolchain, installed on first use, and check that it loads.
    Build {
        /// The project directory.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Run the plugin project's own unit tests in DIR (default: here),
    /// natively, with the kit that matches this kaizen.
    Test {
        /// The project directory.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Remove a plugin added with `plugins add`, and its lock entry.
    Remove {
        /// The plugin's name.
        name: String,
        /// From the workspace's .kaizen/plugins instead of yours.
        #[arg(long)]
        workspace: bool,
        /// The workspace (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Show a component's world (imports, exports) and its tools with their
    /// input schemas. PATH is a plugin directory or a .wasm file; nothing is
    /// granted to it.
    Inspect {
        /// A plugin directory (with plugin.toml) or a component file.
        path: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ToolsCommand {
    /// Every tool of every loaded plugin.
    List {
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// Print JSON (with input schemas) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool directly, as the model would, and print its result:
    /// for trying a plugin while writing it. Exits 1 when the tool fails.
    Call {
        /// The tool's name, e.g. `Glob`.
        name: String,
        /// The input as JSON (read from stdin when omitted).
        input: Option<String>,
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// Print the whole result (content parts and metadata) as JSON.
        #[arg(long)]
        json: bool,
        /// Make the call N times in one session and report its latency
        /// (median, p90, min) on stderr; the last result is printed.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
    },
}
