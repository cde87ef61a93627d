//! `kaizen run --runtime NAME|auto`: the task on Kaizen's own loop or on
//! another vendor's agent CLI, chosen by name or by the selector, with the
//! same events, result object and exit codes; and `kaizen runtimes`.

use crate::local_runtime::{self, LocalRuntime};
use crate::output::{OutputFormat, Printer};
use crate::run_options::RunOptions;
use kaizen_app::config::Setup;
use kaizen_app::external_sessions::keep_session;
use kaizen_app::session::{self, Choice};
use kaizen_app::session_builder::{SetupError, usage};
use kaizen_app::trust::TrustStatus;
use kaizen_protocol::{CancellationToken, PassedOver, PermissionMode, RUNTIME_NAME};
use kaizen_runtimes::selector::{self, AUTO};
use kaizen_runtimes::{
    Availability, ExecutionContext, History, Limits, PastRun, Resume, RuntimeAdapter, RuntimeError,
    external_runtimes,
};
use kaizen_session_store::SessionMeta;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the runtimes' recent runs are kept, under `KAIZEN_HOME`.
const HISTORY: &str = "runtimes/history.jsonl";

/// Where the files a runtime's run is given (settings, an MCP config) are
/// made, under `KAIZEN_HOME`, and removed after the run.
const SCRATCH: &str = "runtimes/scratch";

/// The external runtime that runs the session `--resume` names, if it is
/// one (a Kaizen session, or one that cannot be read, is `kaizen run`'s
/// to resume and to explain).
pub fn runtime_of(choice: &Choice) -> Option<String> {
    let Choice::Resume(name) = choice else {
        return None;
    };
    let store = session::open_store().ok()?;
    let id = store.resolve(name).ok()?;
    store.meta(&id).ok()?.runtime
}

/// Runs the task on the runtime `requested` (a name, or `auto`).
pub async fn run(mut options: RunOptions, requested: &str) -> Result<u8, SetupError> {
    options.check_limits()?;
    let resumed = resumed_session(&mut options, requested)?;
    let requested = match &resumed {
        Some(meta) => meta.runtime.clone().unwrap_or_default(),
        None => requested.to_string(),
    };
    let requested = requested.as_str();
    let only_local = options.local_only(
        (!matches!(options.session, Choice::New)).then_some("--resume/--fork of a Kaizen session"),
    );
    if let Some(flag) = only_local
        && requested != RUNTIME_NAME
        && requested != AUTO
    {
        return Err(usage(anyhow::anyhow!(
            "{flag} works only with the kaizen runtime, not {requested}"
        )));
    }
    if !options.stream_input {
        options.task = Some(crate::task_input::read_task(options.task.take())?);
    }
    let setup = Setup::new(options.plugins.cwd.as_deref(), &[], &[], None).map_err(usage)?;
    let mut context = context_for(&options, &setup)?;
    context.resume = resumed.as_ref().and_then(|meta| {
        let tokens = meta.runtime_tokens.unwrap_or_default();
        Some(Resume {
            session: meta.runtime_session.clone()?,
            tokens: (tokens.input, tokens.output),
        })
    });
    let text = options.format == OutputFormat::Text;
    let printer = Arc::new(Printer::new(options.format));
    printer.hold_results();
    let externals = external_runtimes(&setup.prices, Some(&setup.kaizen_home.join(SCRATCH)));
    let local = LocalRuntime::new(options, printer.clone());
    let mut runtimes: Vec<&dyn RuntimeAdapter> = vec![&local];
    let mut left_out = Vec::new();
    for external in &externals {
        match only_local {
            Some(flag) => left_out.push(PassedOver {
                runtime: external.name().to_string(),
                why: format!("the run uses {flag}, which only the kaizen runtime takes"),
            }),
            None => runtimes.push(external),
        }
    }
    let history_file = setup.kaizen_home.join(HISTORY);
    let mut history = History::load(&history_file);
    let mut plan = selector::plan(requested, &runtimes, &context, &history)
        .map_err(|e| usage(anyhow::anyhow!(e)))?;
    plan.left_out.splice(0..0, left_out);
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(crate::signals::watch(interrupt.clone()));
    let executed = selector::execute(&plan, &runtimes, &context, &*printer, &interrupt).await;
    signals.abort();
    let mut execution = match executed {
        Ok(execution) => execution,
        Err(err) => {
            let code = match err {
                RuntimeError::Failed { .. } => 1,
                RuntimeError::Unavailable { .. } | RuntimeError::Unsupported { .. } => 2,
            };
            return Err(SetupError {
                code,
                error: err.into(),
            });
        }
    };
    if execution.result.runtime_name != RUNTIME_NAME
        && let Err(err) = keep_session(&mut execution.result, resumed, &context)
    {
        // The run happened: its result is still reported.
        eprintln!("kaizen: warning: the run is not kept as a session: {err:#}");
    }
    let result = &execution.result;
    printer.print_result(result, &execution.notes);
    printer.finish(result);
    let chose = text && plan.requested == AUTO;
    if let Some(selection) = result.runtime_selection.as_ref().filter(|_| chose) {
        eprintln!("kaizen: ran on {} ({})", selection.chosen, selection.reason);
    }
    let recorded = history.add(PastRun {
        runtime: result.runtime_name.clone(),
        model: result.model_used.clone(),
        status: result.status.as_str().to_string(),
        cost_usd: result.cost_usd,
        duration_ms: result.duration_ms,
    });
    if let Err(err) = recorded {
        eprintln!(
            "kaizen: warning: the run is not in {}: {err}",
            history_file.display()
        );
    }
    Ok(result.status.exit_code())
}

/// The session `--resume` names, when an external runtime runs it: the
/// run goes on with that runtime, in its workspace and on its model unless
/// the flags say otherwise; `options` no longer asks Kaizen's loop to
/// resume. A Kaizen session is left to Kaizen's loop.
fn resumed_session(
    options: &mut RunOptions,
    requested: &str,
) -> Result<Option<SessionMeta>, SetupError> {
    let Choice::Resume(name) = &options.session else {
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
    options.model.get_or_insert_with(|| meta.model.clone());
    options
        .plugins
        .cwd
        .get_or_insert_with(|| PathBuf::from(&meta.cwd));
    options.session = Choice::New;
    Ok(Some(meta))
}

/// What every runtime is told about the task.
fn context_for(options: &RunOptions, setup: &Setup) -> Result<ExecutionContext, SetupError> {
    let permissions = &options.permissions;
    let permission_mode = match &permissions.permission_mode {
        Some(mode) => PermissionMode::parse(mode).map_err(|e| usage(anyhow::anyhow!(e)))?,
        None => PermissionMode::Default,
    };
    let mut context = ExecutionContext::new(
        options.task.clone().unwrap_or_default(),
        setup.policy.workspace.clone(),
    );
    // A workspace that configures nothing has nothing to hide; one that
    // does is trusted only as Kaizen trusts it.
    context.trusted_workspace = matches!(
        setup.trust,
        TrustStatus::Trusted | TrustStatus::NothingToTrust
    );
    context.model = options.model.clone();
    context.limits = Limits {
        max_cycles: options.max_cycles,
        budget_usd: options.budget_usd,
        timeout: options.timeout.map(Duration::from_secs_f64),
    };
    context.permission_mode = permission_mode;
    context.allowed_tools = kaizen_app::guard_setup::split_rules(&permissions.allowed_tools);
    context.disallowed_tools = kaizen_app::guard_setup::split_rules(&permissions.disallowed_tools);
    Ok(context)
}

/// `kaizen runtimes`: each runtime, whether it can run here, its version
/// and what it can do.
pub fn list(json: bool) -> anyhow::Result<()> {
    let setup = Setup::new(None, &[], &[], None)?;
    let env = std::env::vars().collect();
    let externals = external_runtimes(&setup.prices, None);
    let mut rows = vec![(
        RUNTIME_NAME.to_string(),
        local_runtime::availability(None),
        local_runtime::capabilities(),
    )];
    // Each CLI is asked its version at once: some take a second to start.
    std::thread::scope(|scope| {
        let asked: Vec<_> = externals
            .iter()
            .map(|external| scope.spawn(|| external.availability(&env)))
            .collect();
        for (external, asked) in externals.iter().zip(asked) {
            let availability = asked
                .join()
                .unwrap_or_else(|_| Availability::missing("its check failed"));
            rows.push((
                external.name().to_string(),
                availability,
                external.capabilities(),
            ));
        }
    });
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, availability, capabilities)| {
                let mut row = serde_json::json!({ "name": name });
                row["availability"] = serde_json::to_value(availability).unwrap_or_default();
                row["capabilities"] = serde_json::to_value(capabilities).unwrap_or_default();
                row
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    // A closed pipe (`| head`) ends the listing, not the process.
    let _ = writeln!(
        out,
        "{:<12} {:<10} {:<26} {:<28} {:<4} {:<9} RESUME",
        "RUNTIME", "INSTALLED", "VERSION", "MODELS", "MCP", "COST"
    );
    for (name, availability, capabilities) in &rows {
        let vendors: Vec<String> = capabilities
            .vendors
            .iter()
            .map(|v| {
                serde_json::to_value(v)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
            })
            .map(Option::unwrap_or_default)
            .collect();
        let yes = |b: bool| if b { "yes" } else { "no" };
        let _ = writeln!(
            out,
            "{:<12} {:<10} {:<26} {:<28} {:<4} {:<9} {}",
            name,
            yes(availability.installed),
            availability.version.as_deref().unwrap_or("-"),
            vendors.join(","),
            yes(capabilities.mcp),
            match capabilities.cost {
                kaizen_runtimes::CostReporting::Reported => "reported",
                kaizen_runtimes::CostReporting::Estimated => "estimated",
            },
            yes(capabilities.resume),
        );
    }
    for (name, availability, _) in &rows {
        if let Some(problem) = &availability.problem {
            let first = problem.lines().next().unwrap_or_default();
            let _ = writeln!(out, "{name}: {first}");
        }
    }
    Ok(())
}
