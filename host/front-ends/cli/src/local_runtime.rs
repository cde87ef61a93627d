//! Kaizen's own loop as `kaizen run` runs it (`run_cmd::run_with`), for
//! the library's parts that hand a task to it: the runtime selector
//! (`--runtime`, [`own_loop`]) and a cluster's worker ([`OnThisMachine`]).

use crate::PermissionArgs;
use crate::output::{OutputFormat, Printer};
use crate::run_cmd::{self, Finished};
use crate::run_options::RunOptions;
use futures::future::LocalBoxFuture;
use kaizen_app::plugin_loading::Selection;
use kaizen_app::runtimes::OwnLoop;
use kaizen_app::session_builder::SetupError;
use kaizen_app::worker::{HostedTurn, TurnLoop};
use kaizen_protocol::{CancellationToken, RunResult};
use std::sync::Arc;

/// Runs `options` on Kaizen's loop, reporting to `printer`, to the
/// result of the session's last run.
async fn ran(
    options: RunOptions,
    printer: Arc<Printer>,
    interrupt: CancellationToken,
) -> Result<RunResult, SetupError> {
    match run_cmd::run_with(options, printer, interrupt).await? {
        Finished::Ran(result) => Ok(*result),
        Finished::Compacted(_) => Err(anyhow::anyhow!("it compacted instead of running").into()),
    }
}

/// Kaizen's loop as the runtime selector runs it: `options` (the
/// context is made from the same options), reporting to `printer`.
pub fn own_loop(options: RunOptions, printer: Arc<Printer>) -> OwnLoop {
    OwnLoop::new(options.model.clone(), move |interrupt| {
        Box::pin(ran(options, printer, interrupt))
    })
}

/// Runs a cluster's turns on Kaizen's loop here, with this machine's
/// configuration.
pub struct OnThisMachine;

impl TurnLoop for OnThisMachine {
    fn run(
        &self,
        turn: HostedTurn,
        interrupt: CancellationToken,
    ) -> LocalBoxFuture<'static, Result<RunResult, SetupError>> {
        let HostedTurn {
            request,
            workspace,
            session,
            hosted,
        } = turn;
        let options = RunOptions {
            task: Some(request.task),
            model: request.model,
            provider: None,
            format: OutputFormat::Json,
            max_cycles: request.max_cycles,
            budget_usd: request.budget_usd,
            timeout: request.timeout,
            record: None,
            replay: None,
            plugins: Selection {
                cwd: Some(workspace),
                plugins: Vec::new(),
                add_dirs: Vec::new(),
            },
            planner: None,
            session,
            permissions: PermissionArgs {
                permission_mode: request.permission_mode,
                allowed_tools: request.allowed_tools,
                disallowed_tools: request.disallowed_tools,
            },
            stream_input: false,
            compact_only: None,
            hosted: Some(hosted),
        };
        // The result goes back through the engine; nothing is printed here.
        let printer = Arc::new(Printer::new(OutputFormat::Json));
        printer.hold_results();
        Box::pin(ran(options, printer, interrupt))
    }
}
