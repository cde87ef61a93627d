//! `kaizen run --runtime NAME|auto`: the task on Kaizen's own loop or on
//! another vendor's agent CLI, chosen by name or by the selector, with the
//! same events, result object and exit codes ([`kaizen_app::runtimes`]);
//! and `kaizen runtimes`.

use crate::output::{OutputFormat, Printer};
use crate::run_options::RunOptions;
pub use kaizen_app::runtimes::runtime_of;
use kaizen_app::runtimes::{self, OwnLoop, RuntimeRun, RuntimeTask};
use kaizen_app::session::Choice;
use kaizen_app::session_builder::SetupError;
use kaizen_protocol::CancellationToken;
use std::io::Write;
use std::sync::Arc;

/// Runs the task on the runtime `requested` (a name, or `auto`).
pub async fn run(mut options: RunOptions, requested: &str) -> Result<u8, SetupError> {
    options.check_limits()?;
    let resumed = runtimes::resumed_session(
        &mut options.session,
        &mut options.model,
        &mut options.plugins.cwd,
        requested,
    )?;
    let only_local = options.local_only(
        (!matches!(options.session, Choice::New)).then_some("--resume/--fork of a Kaizen session"),
    );
    let chosen = RuntimeRun::new(requested, resumed, only_local)?;
    if !options.stream_input {
        options.task = Some(crate::task_input::read_task(options.task.take())?);
    }
    let task = RuntimeTask {
        task: options.task.clone().unwrap_or_default(),
        cwd: options.plugins.cwd.clone(),
        model: options.model.clone(),
        max_cycles: options.max_cycles,
        budget_usd: options.budget_usd,
        timeout: options.timeout,
        permissions: options.permissions.clone(),
    };
    let text = options.format == OutputFormat::Text;
    let printer =
        Arc::new(Printer::new(options.format).with_partial_messages(options.partial_messages));
    printer.hold_results();
    let own_loop = own_loop(options, printer.clone());
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(crate::signals::watch(interrupt.clone()));
    let executed = chosen.execute(task, &own_loop, &*printer, &interrupt).await;
    signals.abort();
    let mut ran = executed?;
    if let Some(err) = &ran.not_kept {
        eprintln!("kaizen: warning: the run is not kept as a session: {err:#}");
    }
    let result = &ran.execution.result;
    printer.print_result(result, &ran.execution.notes);
    printer.finish(result);
    if let Some(selection) = result
        .runtime_selection
        .as_ref()
        .filter(|_| text && ran.chose)
    {
        eprintln!("kaizen: ran on {} ({})", selection.chosen, selection.reason);
    }
    let code = result.status.exit_code();
    if let Err(err) = ran.record() {
        eprintln!("kaizen: warning: {err}");
    }
    Ok(code)
}

/// Kaizen's loop as the runtime selector runs it: `options` as `kaizen
/// run` runs them (the terminal or stream-json input answering; the
/// context is made from the same options), reporting to `printer`.
fn own_loop(options: RunOptions, printer: Arc<Printer>) -> OwnLoop {
    OwnLoop::new(options.model.clone(), move |interrupt| {
        Box::pin(crate::run_cmd::run_with(options, printer, interrupt))
    })
}

/// `kaizen runtimes`: each runtime, whether it can run here, its version
/// and what it can do.
pub fn list(json: bool) -> anyhow::Result<()> {
    let rows = runtimes::listing()?;
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|row| {
                let mut value = serde_json::json!({ "name": row.name });
                value["availability"] = serde_json::to_value(&row.availability).unwrap_or_default();
                value["capabilities"] = serde_json::to_value(&row.capabilities).unwrap_or_default();
                value
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
    let yes = |b: bool| if b { "yes" } else { "no" };
    for row in &rows {
        let capabilities = &row.capabilities;
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
        let _ = writeln!(
            out,
            "{:<12} {:<10} {:<26} {:<28} {:<4} {:<9} {}",
            row.name,
            yes(row.availability.installed),
            row.availability.version.as_deref().unwrap_or("-"),
            vendors.join(","),
            yes(capabilities.mcp),
            match capabilities.cost {
                kaizen_runtimes::CostReporting::Reported => "reported",
                kaizen_runtimes::CostReporting::Estimated => "estimated",
            },
            yes(capabilities.resume),
        );
    }
    for row in &rows {
        if let Some(problem) = &row.availability.problem {
            let first = problem.lines().next().unwrap_or_default();
            let _ = writeln!(out, "{}: {first}", row.name);
        }
    }
    Ok(())
}
