//! The stages of a session's assembly that stand alone: choosing the
//! provider, recalling memories, opening the session's store, pricing
//! model calls, and the sandbox warnings a run must show.

use super::{Pricing, SessionRequest, SetupError, Start, usage};
use crate::config::Setup;
use crate::notices::Notices;
use crate::session;
use crate::trust::TrustStatus;
use anyhow::Context as _;
use kaizen_llm::{
    FallbackProvider, HttpSettings, Provider, ProviderFactory, Recorder, ReplayProvider, Usage,
    process_env, select_provider,
};
use kaizen_loop::{SessionState, new_session_id};
use kaizen_plugin_host::PluginSet;
use kaizen_session_store::SessionStore;
use std::sync::atomic::{AtomicBool, Ordering};

/// What earlier sessions learned, for `task`, and the Memory tool in
/// `plugins`' registry; `None` without a task, or when memory is off or
/// its store is damaged (which costs the run its memory, not the run).
pub(super) fn recall(
    setup: &Setup,
    plugins: &mut PluginSet,
    task: Option<&str>,
    notices: &Notices,
) -> Option<String> {
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
        notices.warn(format!("the run goes on without its memory: {err:#}"));
        None
    })
}

/// The session store (redacting the provider keys and the host's HTTP
/// credentials), and the session's state and where its log ends: new
/// (its metadata made unless made before) or continued.
pub(super) fn open_session(
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
pub(super) fn pricing_for(setup: &Setup, provider: &str) -> Pricing {
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
pub(super) fn sandbox_warnings(setup: &Setup, plugins: &PluginSet) -> Vec<String> {
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
pub(super) fn with_fallbacks(
    primary: Box<dyn Provider>,
    setup: &Setup,
    model: &str,
) -> Box<dyn Provider> {
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
pub(super) fn recorded(
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
pub(super) fn provider_for(
    request: &SessionRequest,
) -> Result<(String, Box<dyn Provider>), SetupError> {
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
