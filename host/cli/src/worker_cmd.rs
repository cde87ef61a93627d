//! `kaizen worker`: serves sessions' turns for a Restate cluster.
//!
//! Each turn runs as `kaizen run` would run it here, with this machine's
//! configuration, provider keys, plugins and sandbox, except that the
//! engine journals the loop's steps and the events go to the session's
//! stream in the shared session store ($KAIZEN_HOME/sessions, which every
//! worker and submitter must share).

use crate::hosted::Hosted;
use crate::output::{OutputFormat, Printer};
use crate::run_cmd::{self, Finished, RunOptions};
use crate::session::{self, Choice};
use crate::{PermissionArgs, plugins_cmd};
use kaizen_cluster::{Asker, RestateSteps, TurnFuture, TurnRequest, TurnRunner, TurnStart};
use kaizen_runtime::{CancellationToken, RunResult};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Serves turns on `listen` until the process ends; with `register`
/// (the cluster's admin address), registers itself there first, as
/// `advertise` when given (the address of a load balancer in front), with
/// turns suspended after `suspend_after` without a step.
pub async fn serve(
    listen: SocketAddr,
    register: Option<String>,
    advertise: Option<String>,
    suspend_after: Duration,
) -> u8 {
    let server = tokio::spawn(kaizen_cluster::serve(
        listen,
        Arc::new(Worker),
        suspend_after,
    ));
    if let Some(admin) = register {
        let uri = advertise.unwrap_or_else(|| format!("http://{listen}"));
        if let Err(err) = kaizen_cluster::client::register(&admin, &uri).await {
            eprintln!("kaizen: {err}");
            server.abort();
            return 1;
        }
        eprintln!("kaizen: worker at {uri} registered with {admin}");
    }
    match server.await {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("kaizen: the worker stopped: {err}");
            1
        }
    }
}

/// Runs turns with this process's configuration.
struct Worker;

impl TurnRunner for Worker {
    fn log_end(&self, id: &str) -> Result<Option<u64>, String> {
        let store = session::open_store().map_err(|err| format!("{err:#}"))?;
        if store.dir(id).is_err() {
            return Ok(None);
        }
        kaizen_runtime::restore(&store, id)
            .map(|restored| Some(restored.seq))
            .map_err(|err| err.to_string())
    }

    fn run(
        &self,
        session: String,
        request: TurnRequest,
        start: TurnStart,
        steps: RestateSteps,
        interrupt: CancellationToken,
        abandoned: CancellationToken,
    ) -> TurnFuture {
        // A turn's loop runs on a thread of its own: it need not be Send,
        // and the handler only trades steps with it over channels.
        let (done, result) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name(format!("turn {session}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                let id = session.clone();
                eprintln!("kaizen: session {id}: turn started");
                let run = run_turn(session, request, start, steps, interrupt);
                let outcome = match runtime {
                    // Let go of, the run stops where it is: whatever it
                    // would write next, the turn's next run writes.
                    Ok(runtime) => runtime.block_on(async {
                        tokio::select! {
                            biased;
                            () = abandoned.cancelled() => None,
                            outcome = run => Some(outcome),
                        }
                    }),
                    Err(err) => Some(Err(format!("cannot start the turn's runtime: {err}"))),
                };
                // The worker's log says what became of each turn.
                match &outcome {
                    None => eprintln!(
                        "kaizen: session {id}: the engine let go of the turn (suspended or \
                         disconnected); it runs again from its journal"
                    ),
                    Some(Ok(result)) => eprintln!(
                        "kaizen: session {id}: turn ended {}",
                        result.status.as_str()
                    ),
                    Some(Err(err)) => eprintln!("kaizen: session {id}: turn failed: {err}"),
                }
                if let Some(outcome) = outcome {
                    let _ = done.send(outcome);
                }
            });
        Box::pin(async move {
            spawned.map_err(|err| format!("cannot start the turn's thread: {err}"))?;
            result
                .await
                .unwrap_or_else(|_| Err("the turn's thread ended without a result".into()))
        })
    }
}

/// One turn, from where the session stood when the turn first began.
async fn run_turn(
    session: String,
    request: TurnRequest,
    start: TurnStart,
    steps: RestateSteps,
    interrupt: CancellationToken,
) -> Result<RunResult, String> {
    let store = session::open_store().map_err(|err| format!("{err:#}"))?;
    // What an earlier run of this turn wrote goes: this run writes it
    // again, step by step, as the journal gives the steps back. A session
    // this turn creates that an earlier run made is taken back to nothing
    // but kept, with the stream its submitter is part-way through.
    let made_before = start.seq.is_none() && store.dir(&session).is_ok();
    if let Some(seq) = start.seq.or(made_before.then_some(0)) {
        kaizen_runtime::rewind_log(&store, &session, seq).map_err(|err| err.to_string())?;
    }
    let choice = match start.seq {
        Some(_) => Choice::Resume(session.clone()),
        None => Choice::New,
    };
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
        plugins: plugins_cmd::Selection {
            cwd: request.cwd.map(PathBuf::from),
            plugins: Vec::new(),
            add_dirs: Vec::new(),
        },
        planner: None,
        session: choice,
        permissions: PermissionArgs {
            permission_mode: request.permission_mode,
            allowed_tools: request.allowed_tools,
            disallowed_tools: request.disallowed_tools,
        },
        stream_input: false,
        compact_only: None,
        hosted: Some(Hosted {
            session_id: session,
            made_before,
            asker: Arc::new(Asker::new(steps.clone())),
            steps: Arc::new(steps),
            turn: request.turn,
            cluster: request.cluster,
        }),
    };
    // The result goes back through the engine; nothing is printed here.
    let printer = Arc::new(Printer::new(OutputFormat::Json));
    printer.hold_results();
    match run_cmd::run_with(options, printer, interrupt).await {
        Ok(Finished::Ran(result)) => Ok(*result),
        Ok(Finished::Compacted(_)) => Err("the turn compacted instead of running".into()),
        Err(err) => Err(format!("{:#}", err.error)),
    }
}
