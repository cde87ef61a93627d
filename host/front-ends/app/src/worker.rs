//! A cluster's worker (`kaizen worker`): serves sessions' turns for a
//! Restate cluster.
//!
//! Each turn runs as a run on this machine would, with its configuration,
//! provider keys, plugins and sandbox, except that the engine journals the
//! loop's steps and the events go to the session's stream in the shared
//! session store ($KAIZEN_HOME/sessions, which every worker and submitter
//! must share). This module takes a turn from the engine to Kaizen's loop:
//! its workspace confined to the worker's roots, the session taken back to
//! where the turn began, the turn on a thread of its own, run as `kaizen
//! run` runs a task ([`crate::run`]) with the submitter answering.

use crate::hosted::Hosted;
use crate::notices::Notices;
use crate::permission_flags::PermissionArgs;
use crate::plugin_loading::Selection;
use crate::run::{NoMoreTasks, Opened, RunRequest};
use crate::session::{self, Choice};
use crate::session_builder::{Collaborators, SetupError};
use crate::workspace_roots::{confined_workspace, workspace_roots};
use kaizen_cluster::{Asker, RestateSteps, TurnFuture, TurnRequest, TurnRunner, TurnStart};
use kaizen_protocol::{CancellationToken, RunResult, Silent};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A turn for Kaizen's loop to run on this worker.
struct HostedTurn {
    /// What to run: the submitter's model, limits and permissions, in
    /// the workspace inside the worker's roots, hosted by the engine.
    run: RunRequest,
    /// The submitter's task.
    task: String,
    /// The submitter, answering through the engine.
    with: Collaborators<'static>,
}

/// Where and how the worker serves.
pub struct Serving {
    /// Where to serve the engine's calls (HTTP/2).
    pub listen: SocketAddr,
    /// The cluster's admin API to register with first.
    pub register: Option<String>,
    /// The address registered instead of `listen`'s (a load balancer).
    pub advertise: Option<String>,
    /// How long a turn may go without a step before the cluster asks the
    /// worker to suspend it.
    pub suspend_after: Duration,
    /// The cluster's request-identity public keys; none serves anyone.
    pub identity_keys: Vec<String>,
}

/// Why the worker stopped serving.
#[derive(Debug)]
pub enum WorkerError {
    /// Registering with the cluster's admin API failed.
    Register(String),
    /// The endpoint could not serve.
    Serve(String),
    /// The server's task ended without an answer.
    Stopped(String),
}

impl WorkerError {
    /// The exit code it ends `kaizen worker` with.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Serve(_) => 2,
            Self::Register(_) | Self::Stopped(_) => 1,
        }
    }
}

impl fmt::Display for WorkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Register(err) | Self::Serve(err) => f.write_str(err),
            Self::Stopped(err) => write!(f, "the worker stopped: {err}"),
        }
    }
}

/// Runs turns on Kaizen's loop with this process's configuration, in
/// workspaces inside its roots.
pub struct Worker {
    roots: Vec<PathBuf>,
    log: Notices,
}

impl Worker {
    /// A worker whose turns run in directories under `roots` (the current
    /// directory when there is none), telling `log` what becomes of each
    /// turn and what its runs have to tell.
    pub fn new(roots: &[PathBuf], log: Notices) -> Result<Self, String> {
        Ok(Self {
            roots: workspace_roots(roots)?,
            log,
        })
    }

    /// Serves turns until the process ends; with `register`, registers
    /// there first and tells `registered` the address it registered.
    pub async fn serve(
        self,
        serving: Serving,
        registered: impl FnOnce(&str),
    ) -> Result<(), WorkerError> {
        let Serving {
            listen,
            register,
            advertise,
            suspend_after,
            identity_keys,
        } = serving;
        let server = tokio::spawn(async move {
            kaizen_cluster::serve(listen, Arc::new(self), suspend_after, &identity_keys).await
        });
        if let Some(admin) = register {
            let uri = advertise.unwrap_or_else(|| format!("http://{listen}"));
            if let Err(err) = kaizen_cluster::client::register(&admin, &uri).await {
                server.abort();
                return Err(WorkerError::Register(err));
            }
            registered(&uri);
        }
        match server.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(WorkerError::Serve(err)),
            Err(err) => Err(WorkerError::Stopped(err.to_string())),
        }
    }
}

impl TurnRunner for Worker {
    fn log_end(&self, id: &str) -> Result<Option<u64>, String> {
        let store = session::open_store().map_err(|err| format!("{err:#}"))?;
        // A store that cannot be read is the turn's error, not a session
        // that was never made (which the turn would start anew).
        if !store.exists(id).map_err(|err| err.to_string())? {
            return Ok(None);
        }
        kaizen_loop::restore(&store, id)
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
        let log = self.log.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("turn {session}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                let id = session.clone();
                log.note(format!("session {id}: turn started"));
                let notices = log.clone();
                let run = async move {
                    let turn = hosted_turn(session, request, workspace?, start, steps, notices)?;
                    run_turn(turn, &interrupt)
                        .await
                        .map_err(|err| format!("{:#}", err.error))
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
                log.note(outcome_line(&id, &outcome));
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

/// What the worker's log says became of a turn (`None`: let go of).
fn outcome_line(id: &str, outcome: &Option<Result<RunResult, String>>) -> String {
    match outcome {
        None => format!(
            "session {id}: the engine let go of the turn (suspended or \
             disconnected); it runs again from its journal"
        ),
        Some(Ok(result)) => format!("session {id}: turn ended {}", result.status.as_str()),
        Some(Err(err)) => format!("session {id}: turn failed: {err}"),
    }
}

/// Runs `turn` on Kaizen's loop until it ends or `interrupt` stops it;
/// its events go to the session's stream, which its submitter follows.
async fn run_turn(
    turn: HostedTurn,
    interrupt: &CancellationToken,
) -> Result<RunResult, SetupError> {
    let opened = Opened::open(turn.run)?;
    let task = opened.task(Some(turn.task))?;
    let built = opened.build(task, turn.with).await?;
    // Nobody here watches: a hosted run's events go to its session's
    // stream whatever observer is given.
    Ok(built.run(&Silent, &mut NoMoreTasks, interrupt).await)
}

/// One turn, from where the session stood when the turn first began,
/// telling `notices` what the user should know.
fn hosted_turn(
    session: String,
    request: TurnRequest,
    workspace: PathBuf,
    start: TurnStart,
    steps: RestateSteps,
    notices: Notices,
) -> Result<HostedTurn, String> {
    let store = session::open_store().map_err(|err| format!("{err:#}"))?;
    // What an earlier run of this turn wrote goes: this run writes it
    // again, step by step, as the journal gives the steps back. A session
    // this turn creates that an earlier run made is taken back to nothing
    // but kept, with the stream its submitter is part-way through.
    let made_before =
        start.seq.is_none() && store.exists(&session).map_err(|err| err.to_string())?;
    if let Some(seq) = start.seq.or(made_before.then_some(0)) {
        kaizen_loop::rewind_log(&store, &session, seq).map_err(|err| err.to_string())?;
    }
    let choice = match start.seq {
        Some(_) => Choice::Resume(session.clone()),
        None => Choice::New,
    };
    let hosted = Hosted {
        session_id: session,
        made_before,
        asker: Arc::new(Asker::new(steps.clone())),
        steps: Arc::new(steps),
        turn: request.turn,
        cluster: request.cluster,
    };
    // Nobody is at the worker: the submitter answers through the engine,
    // and the workspace is trusted only as recorded.
    let with = Collaborators {
        interaction: hosted.interaction(),
        ask_trust: None,
        approver: Some(hosted.approver()),
        steps: Some(hosted.steps.clone()),
        inbox: None,
        hooks: Vec::new(),
        notices,
    };
    let run = RunRequest {
        model: request.model,
        provider: None,
        max_cycles: request.max_cycles,
        budget_usd: request.budget_usd,
        timeout: request.timeout,
        record: None,
        replay: None,
        selection: Selection {
            cwd: Some(workspace),
            ..Selection::default()
        },
        planner: None,
        session: choice,
        permissions: PermissionArgs {
            permission_mode: request.permission_mode,
            allowed_tools: request.allowed_tools,
            disallowed_tools: request.disallowed_tools,
        },
        hosted: Some(hosted),
    };
    Ok(HostedTurn {
        run,
        task: request.task,
        with,
    })
}
