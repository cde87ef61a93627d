//! `kaizen`: an autonomous agent runtime whose tools are WebAssembly
//! components.

mod answerers;
mod approve_cmd;
mod audit_cmd;
mod cluster_asks;
mod cluster_cmd;
mod eval_cmd;
mod hosted;
mod local_runtime;
mod mcp_cmd;
mod memory_cmd;
mod output;
mod plugins_add;
mod plugins_cmd;
mod run_args;
mod run_cmd;
mod run_options;
mod runtime_cmd;
mod sandbox_cmd;
mod sessions_cmd;
mod signals;
mod stream_input;
mod task_input;
mod terminal;
mod trust_cmd;
mod worker_cmd;

use clap::{Parser, Subcommand};
use kaizen_app::kits;
pub use kaizen_app::permission_flags::PermissionArgs;
use run_args::{Placement, RunArgs, WorkspaceArgs};
use std::path::PathBuf;
use std::process::ExitCode;

/// Kaizen: an agent runtime whose every tool is a sandboxed WebAssembly component.
#[derive(Parser)]
#[command(name = "kaizen", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
enum McpCommand {
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
enum AuditCommand {
    /// Check the hash chain of one session's log (an id, `last`, or a
    /// file), or of every log.
    Verify {
        /// The session, `last`, or a log file (default: every log).
        which: Option<String>,
    },
}

#[derive(Subcommand)]
enum SessionsCommand {
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
        #[arg(long, value_name = "AGE", value_parser = sessions_cmd::parse_age)]
        older_than: std::time::Duration,
    },
}

#[derive(Subcommand)]
enum SandboxCommand {
    /// Report which sandbox features this machine supports, found by
    /// trying each one. Exits 1 when one is missing: programs then refuse
    /// to run unless `[sandbox] allow-degraded = true` is in the user's
    /// config.
    Check,
}

#[derive(Subcommand)]
enum PluginsCommand {
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
enum ToolsCommand {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KAIZEN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // A log line that cannot be written is lost, not a panic: a server
        // (`kaizen mcp serve`) goes on when its stderr is gone.
        .log_internal_errors(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("kaizen: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(dispatch(cli.command));
    ExitCode::from(code)
}

/// Runs one command; returns the exit code.
async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::Eval(args) => {
            return match eval_cmd::eval(args.into_options()).await {
                Ok(code) => code,
                Err(err) => {
                    eprintln!("kaizen: {err:#}");
                    2
                }
            };
        }
        Command::Run(args) => {
            let (placement, options) = args.into_options();
            let runtime = match placement {
                Placement::Cluster { ingress, admin } => {
                    return run_exit(cluster_cmd::run(options, &ingress, admin.as_deref()).await);
                }
                Placement::Here(runtime) => runtime,
            };
            // A session an external runtime runs goes on there.
            let runtime = runtime.or_else(|| runtime_cmd::runtime_of(&options.session));
            return run_exit(match runtime {
                Some(runtime) => runtime_cmd::run(options, &runtime).await,
                None => run_cmd::run(options).await,
            });
        }
        Command::Worker(args) => return worker_cmd::serve(args).await,
        Command::Approve(args) => {
            return match approve_cmd::approve(args).await {
                Ok(code) => code,
                Err(err) => {
                    eprintln!("kaizen: {err:#}");
                    2
                }
            };
        }
        Command::Runtimes { json } => runtime_cmd::list(json),
        Command::Plugins(PluginsCommand::List { workspace, json }) => {
            plugins_cmd::list(&workspace.into(), json).await
        }
        Command::Plugins(PluginsCommand::Add {
            path,
            workspace,
            cwd,
        }) => plugins_add::add(&path, &plugins_add::Target { cwd, workspace }).await,
        Command::Plugins(PluginsCommand::New { name, lang, dir }) => {
            kits::new_project(&name, lang, dir.as_deref())
        }
        Command::Plugins(PluginsCommand::Build { dir }) => kits::build(&dir).await,
        Command::Plugins(PluginsCommand::Test { dir }) => kits::test(&dir).await,
        Command::Plugins(PluginsCommand::Remove {
            name,
            workspace,
            cwd,
        }) => plugins_add::remove(&name, &plugins_add::Target { cwd, workspace }),
        Command::Plugins(PluginsCommand::Inspect { path, json }) => {
            plugins_cmd::inspect(&path, json).await
        }
        Command::Tools(ToolsCommand::List { workspace, json }) => {
            plugins_cmd::tools(&workspace.into(), json).await
        }
        Command::Tools(ToolsCommand::Call {
            name,
            input,
            workspace,
            json,
            repeat,
        }) => plugins_cmd::call(&workspace.into(), &name, input, json, repeat).await,
        Command::Sandbox(SandboxCommand::Check) => return sandbox_cmd::check(),
        Command::Mcp(McpCommand::Serve {
            workspace,
            permissions,
            http,
        }) => mcp_cmd::serve(&workspace.into(), &permissions, http).await,
        Command::Mcp(McpCommand::List { workspace, json }) => {
            mcp_cmd::list(&workspace.into(), json).await
        }
        Command::Audit(AuditCommand::Verify { which }) => {
            return match audit_cmd::verify(which.as_deref()) {
                Ok(code) => code,
                Err(err) => {
                    eprintln!("kaizen: {err:#}");
                    1
                }
            };
        }
        Command::Memory(command) => memory_cmd::run(command),
        Command::Sessions(SessionsCommand::List { json }) => sessions_cmd::list(json),
        Command::Sessions(SessionsCommand::Show { id, json }) => sessions_cmd::show(&id, json),
        Command::Sessions(SessionsCommand::Rm { id }) => sessions_cmd::remove(&id),
        Command::Sessions(SessionsCommand::Prune { older_than }) => sessions_cmd::prune(older_than),
        Command::Sessions(SessionsCommand::Compact {
            id,
            model,
            json,
            workspace,
            permissions,
        }) => {
            let options = crate::run_options::RunOptions {
                task: None,
                model,
                provider: None,
                format: output::OutputFormat::Text,
                max_cycles: kaizen_runtime::DEFAULT_MAX_CYCLES,
                budget_usd: kaizen_runtime::DEFAULT_BUDGET_USD,
                timeout: None,
                record: None,
                replay: None,
                plugins: workspace.into(),
                planner: None,
                permissions,
                session: kaizen_app::session::Choice::Resume(id),
                stream_input: false,
                compact_only: Some(json),
                hosted: None,
            };
            return run_exit(run_cmd::run(options).await);
        }
        Command::Rewind {
            id,
            to,
            dry_run,
            fork,
        } => sessions_cmd::rewind(&id, to, dry_run, fork),
        Command::Trust { list: true, .. } => trust_cmd::list(),
        Command::Trust {
            dir, revoke: true, ..
        } => trust_cmd::revoke(&dir),
        Command::Trust { dir, .. } => trust_cmd::trust(&dir),
    };
    match result {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("kaizen: {err:#}");
            1
        }
    }
}

/// A run's exit code, its setup failure reported.
fn run_exit(ran: Result<u8, kaizen_app::session_builder::SetupError>) -> u8 {
    match ran {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("kaizen: {:#}", failure.error);
            failure.code
        }
    }
}
