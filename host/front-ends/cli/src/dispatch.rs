//! Runs the command the command line names; each group of commands has
//! its own function, and each command its own module.

use crate::commands::{
    AuditCommand, Command, McpCommand, PluginsCommand, SandboxCommand, SessionsCommand,
    ToolsCommand,
};
use crate::run_args::{Placement, RunArgs};
use crate::{
    answerers, approve_cmd, audit_cmd, cluster_cmd, eval_cmd, mcp_cmd, memory_cmd, output,
    plugins_add, plugins_cmd, run_cmd, runtime_cmd, sandbox_cmd, sessions_cmd, tools_cmd,
    trust_cmd, worker_cmd,
};
use kaizen_app::kits;
use kaizen_app::session_builder::SetupError;

/// Runs one command; returns the exit code.
pub async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::Eval(args) => return code_or(eval_cmd::eval(*args).await, 2),
        Command::Run(args) => return run(*args).await,
        Command::Worker(args) => return worker_cmd::serve(args).await,
        Command::Approve(args) => return code_or(approve_cmd::approve(args).await, 2),
        Command::Runtimes { json } => runtime_cmd::list(json),
        Command::Plugins(command) => plugins(command).await,
        Command::Tools(command) => tools(command).await,
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
            return code_or(audit_cmd::verify(which.as_deref()), 1);
        }
        Command::Memory(command) => memory_cmd::run(command),
        Command::Sessions(command) => return sessions(command).await,
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
    code_or(result.map(|()| 0), 1)
}

/// `kaizen run`: here on Kaizen's loop, on another runtime, or on a
/// cluster.
async fn run(args: RunArgs) -> u8 {
    let (placement, options) = match args.into_options() {
        Ok(options) => options,
        Err(failure) => return run_exit(Err(failure)),
    };
    let runtime = match placement {
        Placement::Cluster { ingress, admin } => {
            return run_exit(cluster_cmd::run(options, &ingress, admin.as_deref()).await);
        }
        Placement::Here(runtime) => runtime,
    };
    // A session an external runtime runs goes on there.
    let runtime = runtime.or_else(|| runtime_cmd::runtime_of(&options.session));
    run_exit(match runtime {
        Some(runtime) => runtime_cmd::run(options, &runtime).await,
        None => run_cmd::run(options).await,
    })
}

/// `kaizen plugins ...`.
async fn plugins(command: PluginsCommand) -> anyhow::Result<()> {
    match command {
        PluginsCommand::List { workspace, json } => {
            plugins_cmd::list(&workspace.into(), json).await
        }
        PluginsCommand::Add {
            path,
            workspace,
            cwd,
        } => plugins_add::add(&path, &plugins_add::Target { cwd, workspace }).await,
        PluginsCommand::New { name, lang, dir } => {
            println!("{}", kits::new_project(&name, lang, dir.as_deref())?);
            Ok(())
        }
        PluginsCommand::Build { dir } => {
            print!("{}", kits::build(&dir, answerers::to_stderr()).await?);
            Ok(())
        }
        PluginsCommand::Test { dir } => kits::test(&dir, answerers::to_stderr()).await,
        PluginsCommand::Remove {
            name,
            workspace,
            cwd,
        } => plugins_add::remove(&name, &plugins_add::Target { cwd, workspace }),
        PluginsCommand::Inspect { path, json } => plugins_cmd::inspect(&path, json).await,
    }
}

/// `kaizen tools ...`.
async fn tools(command: ToolsCommand) -> anyhow::Result<()> {
    match command {
        ToolsCommand::List { workspace, json } => tools_cmd::list(&workspace.into(), json).await,
        ToolsCommand::Call {
            name,
            input,
            workspace,
            json,
            repeat,
        } => tools_cmd::call(&workspace.into(), &name, input, json, repeat).await,
    }
}

/// `kaizen sessions ...`; a compaction runs the session's loop.
async fn sessions(command: SessionsCommand) -> u8 {
    let result = match command {
        SessionsCommand::List { json } => sessions_cmd::list(json),
        SessionsCommand::Show { id, json } => sessions_cmd::show(&id, json),
        SessionsCommand::Rm { id } => sessions_cmd::remove(&id),
        SessionsCommand::Prune { older_than } => sessions_cmd::prune(older_than),
        SessionsCommand::Compact {
            id,
            model,
            json,
            workspace,
            permissions,
        } => {
            let options = crate::run_options::RunOptions {
                task: None,
                model,
                provider: None,
                format: output::OutputFormat::Text,
                partial_messages: false,
                system_prompt: None,
                append_system_prompt: None,
                max_cycles: kaizen_loop::DEFAULT_MAX_CYCLES,
                budget_usd: kaizen_loop::DEFAULT_BUDGET_USD,
                timeout: None,
                record: None,
                replay: None,
                plugins: workspace.into(),
                planner: None,
                permissions,
                session: kaizen_app::session::Choice::Resume(id),
                stream_input: false,
                compact_only: Some(json),
            };
            return run_exit(run_cmd::run(options).await);
        }
    };
    code_or(result.map(|()| 0), 1)
}

/// `result`'s exit code, or `failed` with the error reported.
fn code_or(result: anyhow::Result<u8>, failed: u8) -> u8 {
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("kaizen: {err:#}");
            failed
        }
    }
}

/// A run's exit code, its setup failure reported.
fn run_exit(ran: Result<u8, SetupError>) -> u8 {
    match ran {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("kaizen: {:#}", failure.error);
            failure.code
        }
    }
}
