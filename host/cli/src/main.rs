//! `kaizen`: an autonomous agent runtime whose tools are WebAssembly
//! components.

mod builtins;
mod config;
mod plugins_cmd;

use clap::{Args, Parser, Subcommand};
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
    /// List, inspect and check plugins.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// List the tools the loaded plugins provide.
    #[command(subcommand)]
    Tools(ToolsCommand),
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
    },
}

/// Where to work and which plugins to load.
#[derive(Args, Clone)]
struct WorkspaceArgs {
    /// The workspace: granted to plugins read-write (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Load plugins from DIR too (a plugin directory or a directory of them). Repeatable.
    #[arg(long = "plugins", value_name = "DIR")]
    plugins: Vec<PathBuf>,
    /// Grant every plugin read-write access to DIR as well. Repeatable.
    #[arg(long = "add-dir", value_name = "DIR")]
    add_dirs: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KAIZEN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
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
    let result = runtime.block_on(async {
        match cli.command {
            Command::Plugins(PluginsCommand::List { workspace, json }) => {
                plugins_cmd::list(&workspace.into(), json).await
            }
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
            }) => plugins_cmd::call(&workspace.into(), &name, input, json).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kaizen: {err:#}");
            ExitCode::from(1)
        }
    }
}

impl From<WorkspaceArgs> for plugins_cmd::Selection {
    fn from(args: WorkspaceArgs) -> Self {
        Self {
            cwd: args.cwd,
            plugins: args.plugins,
            add_dirs: args.add_dirs,
        }
    }
}
