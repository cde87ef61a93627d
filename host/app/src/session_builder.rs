//! A session's assembly, in stages: the provider chosen → configuration
//! and the workspace's trust → permissions → plugins → memory → guard →
//! store → the agent's settings. A front end (`kaizen run`, a cluster's
//! worker, Kaizen as a runtime) says what to start in a [`SessionRequest`]
//! and who answers in [`Collaborators`], and gets a [`Ready`] session whose
//! [`Session::agent`] runs it; nothing here reads a terminal or prints a
//! result.

use crate::config::Setup;
use crate::guard_setup;
use crate::permission_flags::PermissionArgs;
use crate::planner_setup::{PlannerChoice, planner_for};
use crate::plugin_loading::{self, Selection};
use crate::session;
use crate::trust::{AskTrust, TrustStatus};
use anyhow::Context as _;
use kaizen_llm::{
    FallbackProvider, HttpSettings, Provider, ProviderFactory, Recorder, ReplayProvider, Usage,
    process_env, select_provider,
};
use kaizen_plugins::PluginSet;
use kaizen_plugins::interaction::Interaction;
use kaizen_protocol::{Approver, Observer, PermissionMode};
use kaizen_runtime::{
    Agent, AgentConfig, Guard, Inbox, SessionRecorder, SessionState, StepExecutor, new_session_id,
};
use kaizen_session_store::SessionStore;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A failure before the loop could start, with its exit code.
pub struct SetupError {
    /// 2 for usage and configuration, 1 otherwise.
    pub code: u8,
    /// What to tell the user.
    pub error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for SetupError {
    fn from(error: E) -> Self {
        Self {
            code: 1,
            error: error.into(),
        }
    }
}

/// A usage or configuration error (exit code 2).
pub fn usage(error: anyhow::Error) -> SetupError {
    SetupError { code: 2, error }
}

/// How the session starts.
pub enum Start {
    /// A new session; its id is given (a cluster's turn names it) or made.
    New {
        /// The id, when the caller has one.
        id: Option<String>,
        /// Whether its metadata already exists (an earlier attempt of the
        /// same turn made it).
        made_before: bool,
        /// Its first task, for its metadata.
        task: String,
    },
    /// An earlier session, restored, its log ending at entry `seq`.
    Continue {
        /// The session as it was.
        state: Box<SessionState>,
        /// Where its log ends.
        seq: u64,
    },
}

/// What to start.
pub struct SessionRequest {
    /// The workspace, and plugin directories and granted directories from
    /// flags.
    pub selection: Selection,
    /// `--permission-mode`, `--allowedTools`, `--disallowedTools`.
    pub permissions: PermissionArgs,
    /// The model, when one is named.
    pub model: Option<String>,
    /// The provider, when one is named.
    pub provider: Option<String>,
    /// A recorded session to replay instead of a provider.
    pub replay: Option<PathBuf>,
    /// Where to record the provider's answers.
    pub record: Option<PathBuf>,
    /// `--planner`: a name or a plugin directory.
    pub planner: Option<String>,
    /// Model calls the run may make.
    pub max_cycles: u32,
    /// Money the run may spend, in USD.
    pub budget_usd: f64,
    /// Seconds the run may take.
    pub timeout: Option<f64>,
    /// New or continued.
    pub start: Start,
    /// The task to recall memories for; `None` runs without memory (a
    /// compaction by hand calls no tool).
    pub recall_for: Option<String>,
}

/// Who the session works with: values the front end makes.
pub struct Collaborators<'a> {
    /// Answers plugins' questions.
    pub interaction: Arc<dyn Interaction>,
    /// Decides whether an untrusted workspace becomes trusted (a person at
    /// a terminal); `None` never trusts implicitly.
    pub ask_trust: Option<AskTrust<'a>>,
    /// Approves tool calls that ask; `None` refuses them.
    pub approver: Option<Arc<dyn Approver>>,
    /// Runs the loop's steps (a cluster journals them); in process when
    /// `None`.
    pub steps: Option<Arc<dyn StepExecutor>>,
    /// Messages that arrive while the run works.
    pub inbox: Option<Inbox>,
}

/// A session ready to run, with what the front end still decides: its
/// state and its agent's settings.
pub struct Ready {
    /// What the session's runs share.
    pub session: Session,
    /// The session's state.
    pub state: SessionState,
    /// The agent's settings, for [`Session::agent`].
    pub config: AgentConfig,
}

/// Model prices, and a warning the first time a model has none.
type Pricing = Box<dyn Fn(&str, &Usage) -> f64 + Send + Sync>;

/// What a session's runs share.
pub struct Session {
    /// Configuration and flags merged.
    pub setup: Setup,
    /// The loaded plugins and the tool registry.
    pub plugins: PluginSet,
    /// Permissions, hooks and the approver.
    pub guard: Arc<Guard>,
    /// The model API.
    pub provider: Box<dyn Provider>,
    /// Where the session is kept.
    pub store: SessionStore,
    /// Keeps each change of the session.
    pub recorder: Arc<SessionRecorder>,
    /// What the user must hear before the run (a degraded sandbox).
    pub warnings: Vec<String>,
    pricing: Pricing,
}

/// Builds a session from a request and its collaborators.
pub struct SessionBuilder<'a> {
    request: SessionRequest,
    with: Collaborators<'a>,
}

impl<'a> SessionBuilder<'a> {
    /// A builder for `request`, working with `with`.
    pub fn new(request: SessionRequest, with: Collaborators<'a>) -> Self {
        Self { request, with }
    }

    /// Runs every stage; the first that fails says why (exit code 2 for
    /// usage and configuration).
    pub async fn build(self) -> Result<Ready, SetupError> {
        let Self { mut request, with } = self;
        check_limits(
            request.timeout,
            request.budget_usd,
            request.max_cycles,
            request.permissions.permission_mode.as_deref(),
        )?;
        let (model, primary) = provider_for(&request)?;
        let choice = request
            .planner
            .as_deref()
            .map(PlannerChoice::parse)
            .transpose()
            .map_err(usage)?;
        if let Some(PlannerChoice::Dir { dir, .. }) = &choice {
            request.selection.plugins.push(dir.clone());
        }
        let loaded = plugin_loading::load_with(
            &request.selection,
            with.interaction,
            with.ask_trust,
            &request.permissions,
            Some(choice.as_ref().map(PlannerChoice::name)),
        )
        .await?;
        let (setup, mut plugins) = (loaded.setup, loaded.plugins);
        let recalled = recall(&setup, &mut plugins, request.recall_for.as_deref());
        let provider = recorded(with_fallbacks(primary, &setup, &model), &request)?;
        for failure in &plugins.failed {
            tracing::warn!("{}", failure.summary());
        }
        let guard = guard_setup::build(
            &setup,
            loaded.host.sandbox(),
            loaded.permissions,
            &plugins,
            with.approver,
        )
        .map_err(usage)?;
        for note in &guard.notes {
            eprintln!("kaizen: {note}");
        }
        let (store, state, seq) = open_session(&setup, request.start, &model)?;
        let recorder = session::recorder(&store, &state, seq, session::policy(&setup.sessions))?;
        let mut config = AgentConfig::new(&model, &setup.policy.workspace);
        config.max_cycles = request.max_cycles;
        config.budget_usd = request.budget_usd;
        config.timeout = request.timeout.map(Duration::from_secs_f64);
        config.transcript_path = store.transcript_path(&state.session_id).ok();
        config.models = setup.models.clone();
        config.plugin_llm = setup.plugin_llm.clone();
        config.context = setup.context.policy(&model);
        config.instructions = recalled;
        config.inbox = with.inbox;
        if let Some(steps) = with.steps {
            config.steps = steps;
        }
        let planner_name = choice
            .as_ref()
            .map(|choice| choice.name().to_string())
            .or_else(|| setup.planner.name.clone());
        if let Some(name) = planner_name {
            config.planner =
                Some(planner_for(&name, &setup.planner, &setup.planners, &plugins).map_err(usage)?);
            // A resume goes on with the same planner: by name, or by its
            // directory when it came from one.
            let kept = match &choice {
                Some(PlannerChoice::Dir { dir, .. }) => dir
                    .canonicalize()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or(name),
                _ => name,
            };
            store.update_meta(&state.session_id, |meta| meta.planner = Some(kept))?;
        }
        let pricing = pricing_for(&setup, provider.name());
        let session = Session {
            warnings: sandbox_warnings(&setup, &plugins),
            guard: Arc::new(guard.guard),
            setup,
            plugins,
            provider,
            store,
            recorder,
            pricing,
        };
        Ok(Ready {
            session,
            state,
            config,
        })
    }
}

impl Session {
    /// The agent that runs this session with `config`, reporting to
    /// `observer`.
    pub fn agent<'s>(&'s self, config: AgentConfig, observer: &'s dyn Observer) -> Agent<'s> {
        Agent {
            provider: self.provider.as_ref(),
            tools: &self.plugins.registry,
            pricing: &self.pricing,
            config,
            observer,
            journal: Some(self.recorder.clone()),
            guard: self.guard.clone(),
        }
    }

    /// Ends session `id`: plugins hear it, the audit log's end is
    /// anchored; returns what could not be kept, for the user.
    pub fn end(&self, id: &str) -> Vec<String> {
        self.plugins.end_session(id);
        if self.setup.hooks.builtins.iter().any(|name| name == "audit") {
            crate::audit_anchor::anchor(&self.store, &self.setup.kaizen_home, id);
        }
        self.recorder.problems()
    }
}

/// What earlier sessions learned, for `task`, and the Memory tool in
/// `plugins`' registry; `None` without a task, or when memory is off or
/// its store is damaged (which costs the run its memory, not the run).
fn recall(setup: &Setup, plugins: &mut PluginSet, task: Option<&str>) -> Option<String> {
    let task = task?;
    crate::memory_setup::for_run(
        &setup.kaizen_home,
        &setup.memory,
        &setup.policy.workspace,
        setup.trust == TrustStatus::Trusted,
        task,
        &mut plugins.registry,
    )
    .unwrap_or_else(|err| {
        eprintln!("kaizen: warning: the run goes on without its memory: {err:#}");
        None
    })
}

/// The session store (redacting the provider keys and the host's HTTP
/// credentials), and the session's state and where its log ends: new
/// (its metadata made unless made before) or continued.
fn open_session(
    setup: &Setup,
    start: Start,
    model: &str,
) -> Result<(SessionStore, SessionState, u64), SetupError> {
    let secret_vars: Vec<String> = setup
        .policy
        .http_credentials
        .iter()
        .map(|credential| credential.env.clone())
        .collect();
    let store = session::configure(session::open_store()?, &setup.sessions, &secret_vars);
    let (state, seq) = match start {
        Start::Continue { state, seq } => (*state, seq),
        Start::New {
            id,
            made_before,
            task,
        } => {
            let state = SessionState::new(id.unwrap_or_else(new_session_id), model);
            if !made_before {
                session::create(&store, &state, &task, &setup.policy.workspace)?;
            }
            (state, 0)
        }
    };
    Ok((store, state, seq))
}

/// What model calls cost, by the setup's prices for `provider`; a model
/// with no known price costs 0, with a warning the first time.
fn pricing_for(setup: &Setup, provider: &str) -> Pricing {
    let prices = setup.prices.clone();
    let provider = provider.to_string();
    let warned = AtomicBool::new(false);
    Box::new(move |model: &str, usage: &Usage| {
        prices.cost_for(&provider, model, usage).unwrap_or_else(|| {
            if !warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "no price is known for model `{model}`; its cost is counted as 0 and --budget-usd cannot bound it"
                );
            }
            0.0
        })
    })
}

/// What the user must hear about the OS sandbox every run: when the user's
/// config lets programs run without a kernel feature this machine lacks
/// (`allow-degraded`), and a loaded plugin may run programs, which layers
/// they run without.
fn sandbox_warnings(setup: &Setup, plugins: &PluginSet) -> Vec<String> {
    let runs_programs = plugins
        .loaded
        .iter()
        .any(|plugin| plugin.grant.process.is_some());
    if !setup.sandbox.allow_degraded || !runs_programs {
        return Vec::new();
    }
    let report = kaizen_sandbox::support();
    let missing: Vec<String> = report
        .features
        .iter()
        .filter(|line| !line.supported)
        .map(|line| format!("{} ({})", line.feature, line.detail))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "the OS sandbox is degraded: programs run without {} (allowed by [sandbox] \
         allow-degraded in the user's config); they are less isolated than SECURITY.md describes",
        missing.join("; ")
    )]
}

/// `primary`, falling back along the config's `[fallbacks]` chains when
/// there are any (a replay never falls back).
fn with_fallbacks(primary: Box<dyn Provider>, setup: &Setup, model: &str) -> Box<dyn Provider> {
    let chains = crate::model_config::chains(&setup.fallbacks, &setup.models, model);
    if chains.is_empty() {
        return primary;
    }
    let make: ProviderFactory = Box::new(|model: &str| {
        select_provider(Some(model), None, &process_env, &HttpSettings::default())
    });
    Box::new(FallbackProvider::new(primary, chains, make))
}

/// `provider`, its responses recorded when the request asks: outside the
/// fallbacks, so that a replay gets the answers whichever model gave them.
fn recorded(
    provider: Box<dyn Provider>,
    request: &SessionRequest,
) -> Result<Box<dyn Provider>, SetupError> {
    Ok(match &request.record {
        Some(path) => Box::new(
            Recorder::new(provider, path)
                .with_context(|| format!("--record {}", path.display()))?,
        ),
        None => provider,
    })
}

/// The model name and a provider: a replay, or one chosen from the request
/// and the environment.
fn provider_for(request: &SessionRequest) -> Result<(String, Box<dyn Provider>), SetupError> {
    if let Some(path) = &request.replay {
        let replay = ReplayProvider::open(path)
            .map_err(|err| usage(anyhow::anyhow!("--replay {}: {err}", path.display())))?;
        let model = request.model.clone().unwrap_or_else(|| "replay".into());
        return Ok((model, Box::new(replay)));
    }
    let selection = select_provider(
        request.model.as_deref(),
        request.provider.as_deref(),
        &process_env,
        &HttpSettings::default(),
    )
    .map_err(|err| usage(anyhow::anyhow!("{err}")))?;
    Ok((selection.model, selection.provider))
}

/// Refuses limits that cannot work (`timeout` seconds, `budget_usd`,
/// `max_cycles`), and a permission `mode` that does not exist.
pub fn check_limits(
    timeout: Option<f64>,
    budget_usd: f64,
    max_cycles: u32,
    mode: Option<&str>,
) -> Result<(), SetupError> {
    if let Some(secs) = timeout
        && !(secs.is_finite() && secs > 0.0)
    {
        return Err(usage(anyhow::anyhow!(
            "--timeout must be a positive number of seconds"
        )));
    }
    if !(budget_usd.is_finite() && budget_usd >= 0.0) {
        return Err(usage(anyhow::anyhow!("--budget-usd must be zero or more")));
    }
    if max_cycles == 0 {
        return Err(usage(anyhow::anyhow!("--max-cycles must be at least 1")));
    }
    if let Some(mode) = mode {
        PermissionMode::parse(mode)
            .map_err(|err| usage(anyhow::anyhow!("--permission-mode: {err}")))?;
    }
    Ok(())
}
