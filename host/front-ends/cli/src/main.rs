//! `kaizen`: an autonomous agent runtime whose tools are WebAssembly
//! components.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod answerers;
mod approve_cmd;
mod audit_cmd;
mod claude_stream;
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
mod sdk_hooks;
mod sessions_cmd;
mod signals;
mod stream_approver;
mod stream_control;
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
    let cli = Cli::parse_from(claude_code_form(std::env::args_os().collect()));
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

/// The command line as Claude Code's Agent SDKs write it, made Kaizen's:
/// flags with no command before them are `kaizen run`'s (`kaizen
/// --output-format stream-json …` is `kaizen run --output-format
/// stream-json …`), and `-v` asks for the version.
fn claude_code_form(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Some(first) = args.get(1).and_then(|arg| arg.to_str()) else {
        return args;
    };
    match first {
        "-v" => args[1] = "--version".into(),
        "-h" | "--help" | "-V" | "--version" => {}
        flag if flag.starts_with('-') => args.insert(1, "run".into()),
        _ => {}
    }
    args
}

#[cfg(test)]
mod tests {
    use super::claude_code_form;

    fn form(args: &[&str]) -> Vec<String> {
        claude_code_form(args.iter().map(Into::into).collect())
            .into_iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn flags_without_a_command_are_a_run() {
        assert_eq!(
            form(&["kaizen", "--output-format", "stream-json", "--verbose"]),
            [
                "kaizen",
                "run",
                "--output-format",
                "stream-json",
                "--verbose"
            ]
        );
        assert_eq!(form(&["kaizen", "-v"]), ["kaizen", "--version"]);
        assert_eq!(form(&["kaizen", "--help"]), ["kaizen", "--help"]);
        assert_eq!(
            form(&["kaizen", "tools", "list"]),
            ["kaizen", "tools", "list"]
        );
        assert_eq!(form(&["kaizen"]), ["kaizen"]);
    }
}
