//! A session's assembly, in stages: the provider chosen → configuration
//! and the workspace's trust → permissions → plugins → memory → guard →
//! store → the agent's settings. A front end (`kaizen run`, a cluster's
//! worker, Kaizen as a runtime) says what to start in a [`SessionRequest`]
//! and who answers in [`Collaborators`], and gets a [`Ready`] session whose
//! [`Session::agent`] runs it; nothing here reads a terminal or prints a
//! result.

use crate::config::Setup;
use crate::guard_setup::{self, PermissionSetup};
use crate::notices::Notices;
use crate::permission_flags::PermissionArgs;
use crate::planner_setup::{PlannerChoice, planner_for};
use crate::plugin_loading::{self, Selection};
use crate::session;
use crate::trust::AskTrust;
use kaizen_llm::{Provider, Usage};
use kaizen_loop::{Agent, AgentConfig, Guard, Inbox, SessionRecorder, SessionState, StepExecutor};
use kaizen_plugin_host::interaction::{Interaction, NoUser};
use kaizen_plugin_host::{PluginHost, PluginSet};
use kaizen_protocol::{Approver, Observer, PermissionMode};
use kaizen_session_store::SessionStore;
use std::path::PathBuf;
use std::sync::Arc;
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

mod stages;

use stages::{
    open_session, pricing_for, provider_for, recall, recorded, sandbox_warnings, with_fallbacks,
};

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
    /// Hooks of the program driving the session (an Agent SDK's
    /// callbacks), run beside the configured ones.
    pub hooks: Vec<Arc<dyn kaizen_hooks::Hook>>,
    /// Where what the user should know of the set-up goes.
    pub notices: Notices,
}

impl Collaborators<'_> {
    /// Nobody to answer: plugins are told no user is available, calls
    /// that ask are refused, the workspace is trusted only as recorded,
    /// steps run in process, notices go to the log.
    pub fn nobody() -> Self {
        Self {
            interaction: Arc::new(NoUser),
            ask_trust: None,
            approver: None,
            steps: None,
            inbox: None,
            hooks: Vec::new(),
            notices: Notices::to_log(),
        }
    }
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
    /// Its skills and slash commands: a task that starts with `/name`
    /// runs that command.
    pub catalogue: Arc<kaizen_claude::catalogue::Catalogue>,
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
            &with.notices,
        )
        .await?;
        let (setup, mut plugins) = (loaded.setup, loaded.plugins);
        let recalled = recall(
            &setup,
            &mut plugins,
            request.recall_for.as_deref(),
            &with.notices,
        );
        let provider = recorded(with_fallbacks(primary, &setup, &model), &request)?;
        let guard = guard_stage(
            &setup,
            &loaded.host,
            loaded.permissions,
            &plugins,
            guard_setup::Answerers {
                approver: with.approver,
                hooks: with.hooks,
            },
            &with.notices,
        )?;
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
        let catalogue = loaded.catalogue.clone();
        config.agent_types = crate::skills_setup::agent_types(&catalogue);
        for agent in &catalogue.agents {
            if let Some(model) = &agent.model {
                // The user's own choice for the type, if any, comes first.
                config
                    .models
                    .sub_agents
                    .entry(agent.name.clone())
                    .or_insert_with(|| model.clone());
            }
        }
        config.instructions = match (catalogue.prompt(), recalled) {
            (Some(skills), Some(recalled)) => Some(format!("{skills}\n\n{recalled}")),
            (skills, recalled) => skills.or(recalled),
        };
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
            catalogue,
            warnings: sandbox_warnings(&setup, &plugins),
            guard,
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

/// A session's tools without a model: what `kaizen mcp serve` offers an
/// MCP client, every call through the session's guard.
pub struct ToolSession {
    /// Configuration and flags merged.
    pub setup: Setup,
    /// The loaded plugins and the tool registry.
    pub plugins: PluginSet,
    /// Permissions, hooks and the approver.
    pub guard: Arc<Guard>,
    /// Its skills and slash commands.
    pub catalogue: Arc<kaizen_claude::catalogue::Catalogue>,
}

/// The stages a session's tools need (configuration and trust,
/// permissions, plugins, the guard) for the workspace and plugins of
/// `selection` under `permissions`, working with `with` (its step
/// executor and inbox are not used: no model runs).
pub async fn tool_session(
    selection: &Selection,
    permissions: &PermissionArgs,
    with: Collaborators<'_>,
) -> Result<ToolSession, SetupError> {
    let loaded = plugin_loading::load_with(
        selection,
        with.interaction,
        with.ask_trust,
        permissions,
        Some(None),
        &with.notices,
    )
    .await?;
    let guard = guard_stage(
        &loaded.setup,
        &loaded.host,
        loaded.permissions,
        &loaded.plugins,
        guard_setup::Answerers {
            approver: with.approver,
            hooks: with.hooks,
        },
        &with.notices,
    )?;
    Ok(ToolSession {
        setup: loaded.setup,
        plugins: loaded.plugins,
        guard,
        catalogue: loaded.catalogue,
    })
}

/// The guard: the permission rules and mode, hooks (the plugins', the
/// configured command hooks, run in `host`'s sandbox, and the driving
/// program's) and the approver; plugins that failed to load are logged,
/// the guard's notes told to `notices`.
fn guard_stage(
    setup: &Setup,
    host: &PluginHost,
    permissions: PermissionSetup,
    plugins: &PluginSet,
    answerers: guard_setup::Answerers,
    notices: &Notices,
) -> Result<Arc<Guard>, SetupError> {
    for failure in &plugins.failed {
        tracing::warn!("{}", failure.summary());
    }
    let guard = guard_setup::build(setup, host.sandbox(), permissions, plugins, answerers)
        .map_err(usage)?;
    for note in &guard.notes {
        notices.note(note.clone());
    }
    Ok(Arc::new(guard.guard))
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
        let mut problems = self.recorder.problems();
        if self.setup.hooks.builtins.iter().any(|name| name == "audit") {
            problems.extend(crate::audit_anchor::anchor(
                &self.store,
                &self.setup.kaizen_home,
                id,
            ));
        }
        problems
    }
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
