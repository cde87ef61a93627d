//! `kaizen worker`: serves sessions' turns for a Restate cluster.
//!
//! Each turn runs as `kaizen run` would run it here, with this machine's
//! configuration, provider keys, plugins and sandbox, except that the
//! engine journals the loop's steps and the events go to the session's
//! stream in the shared session store ($KAIZEN_HOME/sessions, which every
//! worker and submitter must share).

use crate::PermissionArgs;
use crate::hosted::Hosted;
use crate::output::{OutputFormat, Printer};
use crate::run_cmd::{self, Finished};
use crate::run_options::RunOptions;
use kaizen_app::session::{self, Choice};
use kaizen_app::workspace_roots::{confined_workspace, workspace_roots};
use kaizen_cluster::{Asker, RestateSteps, TurnFuture, TurnRequest, TurnRunner, TurnStart};
use kaizen_protocol::{CancellationToken, RunResult};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `kaizen worker`'s arguments.
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Where to serve the engine's calls (HTTP/2).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9080")]
    listen: SocketAddr,
    /// Register with the cluster's admin API at URL first (e.g.
    /// http://host:9070).
    #[arg(long, value_name = "URL")]
    register: Option<String>,
    /// The address the cluster reaches the workers at, when it is not
    /// --listen's (a load balancer in front of them): registered instead.
    #[arg(long, value_name = "URL", requires = "register")]
    advertise: Option<String>,
    /// Seconds a turn may go without a step before the cluster asks the
    /// worker to suspend it: a turn waiting on an answer is then let go of
    /// until the answer comes (registered with --register).
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    suspend_after: u64,
    /// The cluster's request-identity public key (`publickeyv1_…`, as
    /// `restate-server` prints for its signing key; repeatable): only
    /// requests it signed are served. Without one, anyone who can reach
    /// --listen can start turns with this worker's keys.
    #[arg(
        long,
        value_name = "KEY",
        env = "KAIZEN_WORKER_IDENTITY_KEYS",
        value_delimiter = ','
    )]
    identity_key: Vec<String>,
    /// A directory turns may work in (repeatable): a turn whose workspace
    /// is not inside one is refused. Default: the directory the worker
    /// was started in.
    #[arg(long, value_name = "DIR")]
    root: Vec<PathBuf>,
}

/// Serves turns until the process ends; with `--register` (the
/// cluster's admin address), registers itself there first.
pub async fn serve(args: WorkerArgs) -> u8 {
    let roots = match workspace_roots(&args.root) {
        Ok(roots) => roots,
        Err(err) => {
            eprintln!("kaizen: {err}");
            return 2;
        }
    };
    if args.identity_key.is_empty() {
        eprintln!(
            "kaizen: warning: requests to {} are not authenticated: anyone who reaches it can start turns with this worker's keys; give the cluster's request-identity key with --identity-key",
            args.listen
        );
    }
    let suspend_after = Duration::from_secs(args.suspend_after);
    let listen = args.listen;
    let keys = args.identity_key.clone();
    let server = tokio::spawn(async move {
        kaizen_cluster::serve(listen, Arc::new(Worker { roots }), suspend_after, &keys).await
    });
    if let Some(admin) = args.register {
        let uri = args.advertise.unwrap_or_else(|| format!("http://{listen}"));
        if let Err(err) = kaizen_cluster::client::register(&admin, &uri).await {
            eprintln!("kaizen: {err}");
            server.abort();
            return 1;
        }
        eprintln!("kaizen: worker at {uri} registered with {admin}");
    }
    match server.await {
        Ok(Ok(())) => 0,
        Ok(Err(err)) => {
            eprintln!("kaizen: {err}");
            2
        }
        Err(err) => {
            eprintln!("kaizen: the worker stopped: {err}");
            1
        }
    }
}

/// Runs turns with this process's configuration, in workspaces inside
/// `roots`.
struct Worker {
    roots: Vec<PathBuf>,
}

impl TurnRunner for Worker {
    fn log_end(&self, id: &str) -> Result<Option<u64>, String> {
        let store = session::open_store().map_err(|err| format!("{err:#}"))?;
        // A store that cannot be read is the turn's error, not a session
        // that was never made (which the turn would start anew).
        if !store.exists(id).map_err(|err| err.to_string())? {
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
        let workspace = confined_workspace(request.cwd.as_deref(), &self.roots);
        let spawned = std::thread::Builder::new()
            .name(format!("turn {session}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                let id = session.clone();
                eprintln!("kaizen: session {id}: turn started");
                let run = async move {
                    run_turn(session, request, workspace?, start, steps, interrupt).await
                };
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
    workspace: PathBuf,
    start: TurnStart,
    steps: RestateSteps,
    interrupt: CancellationToken,
) -> Result<RunResult, String> {
    let store = session::open_store().map_err(|err| format!("{err:#}"))?;
    // What an earlier run of this turn wrote goes: this run writes it
    // again, step by step, as the journal gives the steps back. A session
    // this turn creates that an earlier run made is taken back to nothing
    // but kept, with the stream its submitter is part-way through.
    let made_before =
        start.seq.is_none() && store.exists(&session).map_err(|err| err.to_string())?;
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
        plugins: kaizen_app::plugin_loading::Selection {
            cwd: Some(workspace),
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
