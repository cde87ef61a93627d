//! `kaizen`: an autonomous agent runtime whose tools are WebAssembly
//! components.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod answerers;
mod approve_cmd;
mod audit_cmd;
mod cluster_asks;
mod cluster_cmd;
mod commands;
mod dispatch;
mod eval_cmd;
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
mod tools_cmd;
mod trust_cmd;
mod worker_cmd;

use clap::Parser;
use commands::Cli;
pub use kaizen_app::permission_flags::PermissionArgs;
use std::process::ExitCode;

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
    let code = runtime.block_on(dispatch::dispatch(cli.command));
    ExitCode::from(code)
}
