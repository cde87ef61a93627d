//! `kaizen run`: one task, start to finish, through the agent loop.

use crate::config::Setup;
use crate::hosted::Hosted;
use crate::output::{OutputFormat, Printer};
use crate::planner_setup::{PlannerChoice, planner_for};
use crate::plugins_cmd::{self, Selection as PluginSelection};
use crate::session::{self, Choice};
use crate::stream_input::StreamInput;
use crate::terminal::{TerminalApprover, TerminalInteraction};
use anyhow::Context as _;
use kaizen_llm::{
    FallbackProvider, HttpSettings, Provider, ProviderFactory, Recorder, ReplayProvider, Usage,
    process_env, select_provider,
};
use kaizen_plugins::interaction::{Interaction, NoUser};
use kaizen_protocol::{Approver, CancellationToken, Event, PermissionMode, RunResult, Status};
use kaizen_runtime::{Agent, AgentConfig, Inbox, SessionState, new_session_id};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What `kaizen run` was asked to do.
pub struct RunOptions {
    /// The task; read from stdin when `None`.
    pub task: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--output-format`.
    pub format: OutputFormat,
    /// `--max-cycles`.
    pub max_cycles: u32,
    /// `--budget-usd`.
    pub budget_usd: f64,
    /// `--timeout` in seconds.
    pub timeout: Option<f64>,
    /// `--record FILE`.
    pub record: Option<PathBuf>,
    /// `--replay FILE`.
    pub replay: Option<PathBuf>,
    /// Workspace and plugins.
    pub plugins: PluginSelection,
    /// `--planner`.
    pub planner: Option<String>,
    /// A new session, `--resume` or `--fork`.
    pub session: Choice,
    /// `--permission-mode`, `--allowedTools`, `--disallowedTools`.
    pub permissions: crate::PermissionArgs,
    /// `--input-format stream-json`: messages as JSON lines on stdin, read
    /// while the run works.
    pub stream_input: bool,
    /// Compact the resumed session's conversation instead of running
    /// (`kaizen sessions compact`); `Some(true)` reports it as JSON.
    pub compact_only: Option<bool>,
    /// Set when a cluster's worker runs the turn.
    pub hosted: Option<Hosted>,
}

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

pub(crate) fn usage(error: anyhow::Error) -> SetupError {
    SetupError { code: 2, error }
}

/// How a `kaizen run` on Kaizen's own loop ended.
pub enum Finished {
    /// The session's last run ended with this result.
    Ran(Box<RunResult>),
    /// A compaction by hand ended with this exit code.
    Compacted(u8),
}

/// Runs the task; returns the process exit code.
pub async fn run(options: RunOptions) -> Result<u8, SetupError> {
    let printer = Arc::new(Printer::new(options.format));
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(watch_signals(interrupt.clone()));
    let finished = run_with(options, printer, interrupt).await;
    signals.abort();
    Ok(match finished? {
        Finished::Ran(result) => result.status.exit_code(),
        Finished::Compacted(code) => code,
    })
}

/// Runs the task on Kaizen's loop, reporting to `printer`, until the
/// session's last run ends or `interrupt` stops it (the caller watches
/// for Ctrl-C: see [`watch_signals`]).
pub async fn run_with(
    mut options: RunOptions,
    printer: Arc<Printer>,
    interrupt: CancellationToken,
) -> Result<Finished, SetupError> {
    check_limits(&options)?;
    let store = session::open_store()?;
    let continued = session::continue_from(&store, &options.session).map_err(usage)?;
    let mut input = match options.stream_input {
        true if options.task.is_some() => {
            return Err(usage(anyhow::anyhow!(
                "with --input-format stream-json the task is the first message on stdin, not an argument"
            )));
        }
        true => Some(StreamInput::start()),
        false => None,
    };
    let first = match &mut input {
        Some(input) => Some(input.next_message().await.ok_or_else(|| {
            usage(anyhow::anyhow!(
                "stdin closed before a user message came (--input-format stream-json)"
            ))
        })?),
        None => None,
    };
    let task = match &continued {
        None if first.is_some() => first,
        None => Some(read_task(options.task.clone())?),
        Some(_) if options.compact_only.is_some() => None,
        Some(continued) => {
            let task = match first {
                Some(first) => Some(first),
                None => optional_task(options.task.clone())?,
            };
            if let Some(why) = session::nothing_to_do(continued, task.as_deref()) {
                return Err(usage(anyhow::anyhow!(why)));
            }
            for warning in &continued.restored.warnings {
                eprintln!("kaizen: warning: {warning}");
            }
            report_lost(continued);
            // The session goes on where it was, with what it was using,
            // unless the flags say otherwise.
            options
                .model
                .get_or_insert_with(|| continued.meta.model.clone());
            options
                .plugins
                .cwd
                .get_or_insert_with(|| PathBuf::from(&continued.meta.cwd));
            if options.planner.is_none() {
                options.planner.clone_from(&continued.meta.planner);
            }
            Some(match task {
                Some(task) => format!("{}\n\n{task}", continued.notice),
                None => continued.notice.clone(),
            })
        }
    };
    let (model, primary) = provider_for(&options)?;
    let terminal = terminal_for(&options, &printer, &interrupt);
    let interaction: Arc<dyn Interaction> = match (&terminal, &options.hosted) {
        (Some(terminal), _) => terminal.clone(),
        (None, Some(hosted)) => hosted.interaction(),
        (None, None) => Arc::new(NoUser),
    };
    // Only a person at a terminal can be asked to trust a workspace.
    let at_terminal = options.hosted.is_none()
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    let ask = at_terminal.then_some(&crate::terminal::ask_trust as crate::trust::AskTrust<'_>);
    let choice = options
        .planner
        .as_deref()
        .map(PlannerChoice::parse)
        .transpose()
        .map_err(usage)?;
    if let Some(PlannerChoice::Dir { dir, .. }) = &choice {
        options.plugins.plugins.push(dir.clone());
    }
    let loaded = plugins_cmd::load_with(
        &options.plugins,
        interaction,
        ask,
        &options.permissions,
        Some(choice.as_ref().map(PlannerChoice::name)),
    )
    .await?;
    let (setup, mut plugins) = (loaded.setup, loaded.plugins);
    // What earlier sessions learned, and the Memory tool (not for a
    // compaction by hand, which calls no tool).
    let recalled = match options.compact_only {
        Some(_) => None,
        None => crate::memory_cmd::for_run(
            &setup.kaizen_home,
            &setup.memory,
            &setup.policy.workspace,
            setup.trust == crate::trust::TrustStatus::Trusted,
            task.as_deref().unwrap_or_default(),
            &mut plugins.registry,
        )
        // A damaged store costs the run its memory, not the run.
        .unwrap_or_else(|err| {
            eprintln!("kaizen: warning: the run goes on without its memory: {err:#}");
            None
        }),
    };
    let provider = recorded(with_fallbacks(primary, &setup, &model), &options)?;
    let warnings = sandbox_warnings(&setup, &plugins);
    for warning in &warnings {
        eprintln!("kaizen: warning: {warning}");
    }
    printer.set_warnings(warnings);
    for failure in &plugins.failed {
        tracing::warn!("{}", failure.summary());
    }
    // Over stream-json input the embedding program answers; else a
    // person at a terminal, or on a worker the turn's submitter.
    let approver = match (&input, terminal.clone()) {
        (Some(input), _) => Some(Arc::new(input.approver(printer.clone())) as Arc<dyn Approver>),
        (None, Some(terminal)) => {
            let config = setup.kaizen_home.join(crate::config::USER_CONFIG);
            Some(Arc::new(TerminalApprover::new(terminal, config)) as Arc<dyn Approver>)
        }
        (None, None) => options.hosted.as_ref().map(Hosted::approver),
    };
    let guard = crate::guard_setup::build(
        &setup,
        loaded.host.sandbox(),
        loaded.permissions,
        &plugins,
        approver,
    )
    .map_err(usage)?;
    for note in &guard.notes {
        eprintln!("kaizen: {note}");
    }
    let guard = Arc::new(guard.guard);
    let prices = &setup.prices;
    let warned = AtomicBool::new(false);
    let provider_name = provider.name().to_string();
    let pricing = |model: &str, usage: &Usage| {
        prices
            .cost_for(&provider_name, model, usage)
            .unwrap_or_else(|| {
                if !warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "no price is known for model `{model}`; its cost is counted as 0 and --budget-usd cannot bound it"
                    );
                }
                0.0
            })
    };
    let secret_vars: Vec<String> = setup
        .policy
        .http_credentials
        .iter()
        .map(|credential| credential.env.clone())
        .collect();
    let store = session::configure(store, &setup.sessions, &secret_vars);
    let (mut state, seq) = match continued {
        Some(continued) => (continued.restored.state, continued.restored.seq),
        None => {
            let id = match &options.hosted {
                Some(hosted) => hosted.session_id.clone(),
                None => new_session_id(),
            };
            let state = SessionState::new(id, &model);
            let first = task.as_deref().unwrap_or_default();
            if !options.hosted.as_ref().is_some_and(|h| h.made_before) {
                session::create(&store, &state, first, &setup.policy.workspace)?;
            }
            (state, 0)
        }
    };
    let recorder = session::recorder(&store, &state, seq, session::policy(&setup.sessions))?;
    let mut config = AgentConfig::new(&model, &setup.policy.workspace);
    config.max_cycles = options.max_cycles;
    config.budget_usd = options.budget_usd;
    config.timeout = options.timeout.map(Duration::from_secs_f64);
    config.transcript_path = store.transcript_path(&state.session_id).ok();
    config.models = setup.models.clone();
    config.plugin_llm = setup.plugin_llm.clone();
    config.context = setup.context.policy(&model);
    config.instructions = recalled;
    let stream = match &options.hosted {
        Some(hosted) => {
            config.steps = hosted.steps.clone();
            Some(hosted.open_stream(&store, &state.session_id)?)
        }
        None => None,
    };
    // Messages while the run works: from stream-json input, or typed at
    // the terminal.
    let inbox = (input.is_some() || terminal.is_some()).then(Inbox::default);
    if let (Some(terminal), Some(inbox)) = (&terminal, &inbox) {
        terminal.queue_into(inbox.clone());
    }
    config.inbox = inbox.clone();
    let planner_name = choice
        .as_ref()
        .map(|choice| choice.name().to_string())
        .or_else(|| setup.planner.name.clone());
    if let Some(name) = planner_name {
        let planner =
            planner_for(&name, &setup.planner, &setup.planners, &plugins).map_err(usage)?;
        config.planner = Some(planner);
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
    let agent = Agent {
        provider: provider.as_ref(),
        tools: &plugins.registry,
        pricing: &pricing,
        config,
        observer: match &stream {
            Some(stream) => &**stream,
            None => &*printer,
        },
        journal: Some(recorder.clone()),
        guard: guard.clone(),
    };
    if let Some(json) = options.compact_only {
        let compacted = agent.compact_now(&mut state, &interrupt).await;
        plugins.end_session(&state.session_id);
        return compacted_report(&state.session_id, compacted, json).map(Finished::Compacted);
    }
    let mut task = task;
    let result = loop {
        // Each run can be interrupted alone; Ctrl-C still reaches it.
        let run_interrupt = interrupt.child_token();
        let run = agent.resume(&mut state, task.as_deref(), &run_interrupt);
        let result = match (&mut input, &inbox) {
            (Some(input), Some(inbox)) => input.drive(run, inbox, &run_interrupt).await,
            _ => run.await,
        };
        printer.finish(&result);
        // What came after the run's last model call starts the next run;
        // over stream-json, so does the next message.
        let waiting = inbox.as_ref().map(Inbox::take_all).unwrap_or_default();
        task = match (waiting.is_empty(), &mut input) {
            (false, _) => Some(waiting.join("\n\n")),
            (true, Some(input)) => input.next_message().await,
            (true, None) => None,
        };
        if task.is_none() || interrupt.is_cancelled() {
            break result;
        }
    };
    plugins.end_session(&state.session_id);
    if setup.hooks.builtins.iter().any(|name| name == "audit") {
        crate::audit_cmd::anchor(&store, &setup.kaizen_home, &state.session_id);
    }
    for problem in recorder.problems() {
        eprintln!("kaizen: warning: the session could not be kept in full: {problem}");
    }
    if result.status != Status::Complete && options.hosted.is_none() {
        eprintln!(
            "kaizen: session {id} stopped ({status}); continue it with: kaizen run --resume {id}",
            id = state.session_id,
            status = result.status.as_str()
        );
    }
    Ok(Finished::Ran(Box::new(result)))
}

/// What `kaizen sessions compact` did, for the user; its exit code.
fn compacted_report(
    id: &str,
    compacted: Result<Option<Event>, String>,
    json: bool,
) -> Result<u8, SetupError> {
    let event = match compacted {
        Err(why) => return Err(anyhow::anyhow!("session {id} was not compacted: {why}").into()),
        Ok(None) => {
            eprintln!("kaizen: session {id} was not compacted (the notice above says why)");
            return Ok(1);
        }
        Ok(Some(event)) => event,
    };
    if json {
        println!("{}", serde_json::to_string(&event)?);
    } else if let Event::Compaction {
        tokens_before,
        tokens_after,
        replaced,
        cost_usd,
        ..
    } = &event
    {
        println!(
            "Compacted session {id}: {replaced} messages summarised; its next request is about {tokens_after} tokens (was {tokens_before}); the summary cost ${cost_usd:.4}."
        );
    }
    Ok(0)
}

/// What the user must hear about the OS sandbox every run: when the user's
/// config lets programs run without a kernel feature this machine lacks
/// (`allow-degraded`), and a loaded plugin may run programs, which layers
/// they run without.
fn sandbox_warnings(
    setup: &crate::config::Setup,
    plugins: &kaizen_plugins::PluginSet,
) -> Vec<String> {
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

/// Who answers plugins' questions and approves tool calls: the terminal
/// when a person is at it (stdin and stderr are terminals, and stdin is
/// not where the task came from), else nobody: plugins are told no user
/// is available, and calls that ask are refused.
fn terminal_for(
    options: &RunOptions,
    printer: &Arc<Printer>,
    interrupt: &CancellationToken,
) -> Option<Arc<TerminalInteraction>> {
    let interactive = options.hosted.is_none()
        && options.task.is_some()
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    interactive.then(|| Arc::new(TerminalInteraction::new(printer.clone(), interrupt.clone())))
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

/// `provider`, its responses recorded when `--record` asks: outside the
/// fallbacks, so that a replay gets the answers whichever model gave them.
fn recorded(
    provider: Box<dyn Provider>,
    options: &RunOptions,
) -> Result<Box<dyn Provider>, SetupError> {
    Ok(match &options.record {
        Some(path) => Box::new(
            Recorder::new(provider, path)
                .with_context(|| format!("--record {}", path.display()))?,
        ),
        None => provider,
    })
}

/// The model name and a provider: a replay, or one chosen from flags and
/// the environment.
fn provider_for(options: &RunOptions) -> Result<(String, Box<dyn Provider>), SetupError> {
    if let Some(path) = &options.replay {
        let replay = ReplayProvider::open(path)
            .map_err(|err| usage(anyhow::anyhow!("--replay {}: {err}", path.display())))?;
        let model = options.model.clone().unwrap_or_else(|| "replay".into());
        return Ok((model, Box::new(replay)));
    }
    let selection = select_provider(
        options.model.as_deref(),
        options.provider.as_deref(),
        &process_env,
        &HttpSettings::default(),
    )
    .map_err(|err| usage(anyhow::anyhow!("{err}")))?;
    Ok((selection.model, selection.provider))
}

pub(crate) fn check_limits(options: &RunOptions) -> Result<(), SetupError> {
    if let Some(secs) = options.timeout
        && !(secs.is_finite() && secs > 0.0)
    {
        return Err(usage(anyhow::anyhow!(
            "--timeout must be a positive number of seconds"
        )));
    }
    if !(options.budget_usd.is_finite() && options.budget_usd >= 0.0) {
        return Err(usage(anyhow::anyhow!("--budget-usd must be zero or more")));
    }
    if options.max_cycles == 0 {
        return Err(usage(anyhow::anyhow!("--max-cycles must be at least 1")));
    }
    if let Some(mode) = &options.permissions.permission_mode {
        PermissionMode::parse(mode)
            .map_err(|err| usage(anyhow::anyhow!("--permission-mode: {err}")))?;
    }
    Ok(())
}

/// Tells the user what a resumed or forked session cannot get back; the
/// model is told the same in its next message.
fn report_lost(continued: &session::Continued) {
    let cut = continued.restored.state.unanswered_calls();
    if !cut.is_empty() {
        let names: Vec<&str> = cut.iter().map(|(_, name)| name.as_str()).collect();
        eprintln!(
            "kaizen: {} call(s) of session {} were cut off when it stopped ({}); the model is told they may be partly done, and they are not run again by themselves",
            cut.len(),
            continued.id,
            names.join(", ")
        );
    }
    eprintln!(
        "kaizen: continuing session {}: programs it started before, background shells included, are gone",
        continued.id
    );
}

/// The first flag given that only Kaizen's loop on this machine honours
/// (another runtime, or a cluster, cannot): `session`, when the caller
/// counts the session's flag among them, first.
pub(crate) fn local_only(
    options: &RunOptions,
    session: Option<&'static str>,
) -> Option<&'static str> {
    session.or_else(|| {
        [
            (options.stream_input, "--input-format stream-json"),
            (options.record.is_some(), "--record"),
            (options.replay.is_some(), "--replay"),
            (options.planner.is_some(), "--planner"),
            (options.provider.is_some(), "--provider"),
            (!options.plugins.plugins.is_empty(), "--plugin"),
            (!options.plugins.add_dirs.is_empty(), "--add-dir"),
        ]
        .into_iter()
        .find_map(|(used, flag)| used.then_some(flag))
    })
}

/// A resumed session's new task: the argument, or stdin when it is not a
/// terminal and says something; none otherwise.
fn optional_task(task: Option<String>) -> Result<Option<String>, SetupError> {
    if task.is_some() || std::io::stdin().is_terminal() {
        return Ok(task.filter(|task| !task.trim().is_empty()));
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading the task from stdin")?;
    Ok(Some(text).filter(|task| !task.trim().is_empty()))
}

pub(crate) fn read_task(task: Option<String>) -> Result<String, SetupError> {
    let task = match task {
        Some(task) => task,
        None if std::io::stdin().is_terminal() => {
            return Err(usage(anyhow::anyhow!(
                "no task given: pass it as an argument (kaizen run \"fix the failing test\") or on stdin"
            )));
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the task from stdin")?;
            text
        }
    };
    if task.trim().is_empty() {
        return Err(usage(anyhow::anyhow!("the task is empty")));
    }
    Ok(task)
}

/// First Ctrl-C or SIGTERM: end the run gracefully. Second Ctrl-C: exit now.
pub(crate) async fn watch_signals(interrupt: CancellationToken) {
    let mut hits = 0u32;
    while wait_for_signal().await {
        hits += 1;
        if hits >= 2 {
            eprintln!("\nkaizen: interrupted again; stopping now");
            std::process::exit(130);
        }
        eprintln!(
            "\nkaizen: interrupting: finishing the current step (press Ctrl-C again to stop at once)…"
        );
        interrupt.cancel();
    }
}

/// Waits for SIGINT or SIGTERM; false when signals cannot be watched.
async fn wait_for_signal() -> bool {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return false;
    };
    tokio::select! {
        _ = int.recv() => true,
        _ = term.recv() => true,
    }
}
