//! A task on another vendor's agent CLI or on Kaizen's own loop, chosen by
//! name or by the selector (`kaizen run --runtime NAME|auto`), with the
//! same events, result object and exit codes: the session an external
//! runtime goes on with, what every runtime is told, the history `auto`
//! chooses by, and an external run kept as a Kaizen session. Kaizen's own
//! loop is the front end's to run ([`OwnLoop`]); what `kaizen runtimes`
//! lists is in [`listing()`].

mod listing;
mod own_loop;

pub use listing::{Listed, listing};
pub use own_loop::{LoopFuture, OwnLoop, availability, capabilities};

use crate::config::Setup;
use crate::external_sessions::keep_session;
use crate::guard_setup::split_rules;
use crate::permission_flags::PermissionArgs;
use crate::session::{self, Choice};
use crate::session_builder::{SetupError, usage};
use crate::trust::TrustStatus;
use kaizen_protocol::{CancellationToken, Observer, PassedOver, PermissionMode, RUNTIME_NAME};
use kaizen_runtimes::selector::{self, AUTO};
use kaizen_runtimes::{
    Execution, ExecutionContext, History, Limits, PastRun, Resume, RuntimeAdapter, RuntimeError,
    external_runtimes,
};
use kaizen_session_store::SessionMeta;
use std::path::PathBuf;
use std::time::Duration;

/// Where the runtimes' recent runs are kept, under `KAIZEN_HOME`.
const HISTORY: &str = "runtimes/history.jsonl";

/// Where the files a runtime's run is given (settings, an MCP config) are
/// made, under `KAIZEN_HOME`, and removed after the run.
const SCRATCH: &str = "runtimes/scratch";

/// The external runtime that runs the session `--resume` names, if it is
/// one (a Kaizen session, or one that cannot be read, is Kaizen's loop's
/// to resume and to explain).
pub fn runtime_of(choice: &Choice) -> Option<String> {
    let Choice::Resume(name) = choice else {
        return None;
    };
    let store = session::open_store().ok()?;
    let id = store.resolve(name).ok()?;
    store.meta(&id).ok()?.runtime
}

/// The session `--resume` (in `session`) names, when an external runtime
/// runs it: the run goes on with that runtime, in its workspace (`cwd`)
/// and on its `model` unless those are given, and `session` no longer
/// asks Kaizen's loop to resume. A Kaizen session is left to Kaizen's
/// loop.
pub fn resumed_session(
    session: &mut Choice,
    model: &mut Option<String>,
    cwd: &mut Option<PathBuf>,
    requested: &str,
) -> Result<Option<SessionMeta>, SetupError> {
    let Choice::Resume(name) = &*session else {
        return Ok(None);
    };
    let store = session::open_store()?;
    let id = store.resolve(name).map_err(|e| usage(e.into()))?;
    let meta = store.meta(&id)?;
    let Some(runtime) = &meta.runtime else {
        return Ok(None);
    };
    if requested != runtime.as_str() && requested != AUTO {
        return Err(usage(anyhow::anyhow!(
            "session {id} runs on {runtime}; it goes on there (drop --runtime {requested})"
        )));
    }
    if meta.runtime_session.is_none() {
        return Err(usage(anyhow::anyhow!(
            "session {id} never got a session id from {runtime}, so it cannot go on"
        )));
    }
    model.get_or_insert_with(|| meta.model.clone());
    cwd.get_or_insert_with(|| PathBuf::from(&meta.cwd));
    *session = Choice::New;
    Ok(Some(meta))
}

/// The task as every runtime is told it.
pub struct RuntimeTask {
    /// What to do (empty when it comes as stream-json input).
    pub task: String,
    /// The workspace; the current directory when `None`.
    pub cwd: Option<PathBuf>,
    /// The model; each runtime's default when `None`.
    pub model: Option<String>,
    /// Model calls at most.
    pub max_cycles: u32,
    /// USD at most.
    pub budget_usd: f64,
    /// Seconds at most.
    pub timeout: Option<f64>,
    /// `--permission-mode`, `--allowedTools`, `--disallowedTools`.
    pub permissions: PermissionArgs,
}

/// A run on the runtime asked for, before its task is known.
pub struct RuntimeRun {
    requested: String,
    resumed: Option<SessionMeta>,
    only_local: Option<&'static str>,
}

/// A run that went to a runtime, its result settled.
pub struct Ran {
    /// The execution whose result stands; an external runtime's names
    /// the Kaizen session it is kept as.
    pub execution: Execution,
    /// The selector chose the runtime (`auto`).
    pub chose: bool,
    /// Why an external runtime's run is not kept as a session, if so (the
    /// run happened: its result still stands).
    pub not_kept: Option<anyhow::Error>,
    history: History,
    history_file: PathBuf,
}

impl RuntimeRun {
    /// A run on `requested` (a name, or `auto`), going on from `resumed`
    /// (whose runtime it must be); `only_local` is the first flag given
    /// that only Kaizen's loop takes, which leaves the others out.
    pub fn new(
        requested: &str,
        resumed: Option<SessionMeta>,
        only_local: Option<&'static str>,
    ) -> Result<Self, SetupError> {
        let requested = match &resumed {
            Some(meta) => meta.runtime.clone().unwrap_or_default(),
            None => requested.to_string(),
        };
        if let Some(flag) = only_local
            && requested != RUNTIME_NAME
            && requested != AUTO
        {
            return Err(usage(anyhow::anyhow!(
                "{flag} works only with the kaizen runtime, not {requested}"
            )));
        }
        Ok(Self {
            requested,
            resumed,
            only_local,
        })
    }

    /// Runs `task` on the runtime asked for, or down the selector's order,
    /// with `own_loop` as Kaizen's loop, reporting to `observer` (all but
    /// the result, which the caller reports); `interrupt` stops it.
    pub async fn execute(
        self,
        task: RuntimeTask,
        own_loop: &dyn RuntimeAdapter,
        observer: &dyn Observer,
        interrupt: &CancellationToken,
    ) -> Result<Ran, SetupError> {
        let setup = Setup::new(task.cwd.as_deref(), &[], &[], None).map_err(usage)?;
        let mut context = context_for(&task, &setup)?;
        context.resume = self.resumed.as_ref().and_then(|meta| {
            let tokens = meta.runtime_tokens.unwrap_or_default();
            Some(Resume {
                session: meta.runtime_session.clone()?,
                tokens: (tokens.input, tokens.output),
            })
        });
        let externals = external_runtimes(&setup.prices, Some(&setup.kaizen_home.join(SCRATCH)));
        let mut runtimes: Vec<&dyn RuntimeAdapter> = vec![own_loop];
        let mut left_out = Vec::new();
        for external in &externals {
            match self.only_local {
                Some(flag) => left_out.push(PassedOver {
                    runtime: external.name().to_string(),
                    why: format!("the run uses {flag}, which only the kaizen runtime takes"),
                }),
                None => runtimes.push(external),
            }
        }
        let history_file = setup.kaizen_home.join(HISTORY);
        let history = History::load(&history_file);
        let mut plan = selector::plan(&self.requested, &runtimes, &context, &history)
            .map_err(|e| usage(anyhow::anyhow!(e)))?;
        plan.left_out.splice(0..0, left_out);
        let executed = selector::execute(&plan, &runtimes, &context, observer, interrupt).await;
        let mut execution = executed.map_err(|err| SetupError {
            code: match err {
                RuntimeError::Failed { .. } => 1,
                RuntimeError::Unavailable { .. } | RuntimeError::Unsupported { .. } => 2,
            },
            error: err.into(),
        })?;
        let not_kept = if execution.result.runtime_name == RUNTIME_NAME {
            None
        } else {
            keep_session(&mut execution.result, self.resumed, &context).err()
        };
        Ok(Ran {
            execution,
            chose: plan.requested == AUTO,
            not_kept,
            history,
            history_file,
        })
    }
}

impl Ran {
    /// Adds the run to the history `auto` chooses by; why it could not be.
    pub fn record(&mut self) -> Result<(), String> {
        let result = &self.execution.result;
        self.history
            .add(PastRun {
                runtime: result.runtime_name.clone(),
                model: result.model_used.clone(),
                status: result.status.as_str().to_string(),
                cost_usd: result.cost_usd,
                duration_ms: result.duration_ms,
            })
            .map_err(|err| format!("the run is not in {}: {err}", self.history_file.display()))
    }
}

/// What every runtime is told about the task.
fn context_for(task: &RuntimeTask, setup: &Setup) -> Result<ExecutionContext, SetupError> {
    let permissions = &task.permissions;
    let permission_mode = match &permissions.permission_mode {
        Some(mode) => PermissionMode::parse(mode).map_err(|e| usage(anyhow::anyhow!(e)))?,
        None => PermissionMode::Default,
    };
    let mut context = ExecutionContext::new(task.task.clone(), setup.policy.workspace.clone());
    // A workspace that configures nothing has nothing to hide; one that
    // does is trusted only as Kaizen trusts it.
    context.trusted_workspace = matches!(
        setup.trust,
        TrustStatus::Trusted | TrustStatus::NothingToTrust
    );
    context.model = task.model.clone();
    context.limits = Limits {
        max_cycles: task.max_cycles,
        budget_usd: task.budget_usd,
        timeout: task.timeout.map(Duration::from_secs_f64),
    };
    context.permission_mode = permission_mode;
    context.allowed_tools = split_rules(&permissions.allowed_tools);
    context.disallowed_tools = split_rules(&permissions.disallowed_tools);
    Ok(context)
}
