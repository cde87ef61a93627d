//! `kaizen eval`: runs task folders with each planner and reports, per
//! task and planner, whether the task's check passed, the model calls, the
//! tokens and the cost. The harness (task folders, runs, sandboxed checks,
//! totals) is [`kaizen_app::eval`]'s; this prints what it finds.

use anyhow::Context as _;
use kaizen_app::eval::{self, EvalOptions, Row, Summary};
use std::path::PathBuf;

/// `kaizen eval`'s arguments.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// Task folders, or folders holding task folders.
    #[arg(required = true)]
    tasks: Vec<PathBuf>,
    /// A planner to run each task with (repeatable; `none` is the plain
    /// loop, the default).
    #[arg(long, value_name = "NAME|PATH")]
    planner: Vec<String>,
    /// The model (as for `kaizen run`).
    #[arg(long)]
    model: Option<String>,
    /// The provider (as for `kaizen run`).
    #[arg(long)]
    provider: Option<String>,
    /// Model calls per run at most (a task's own max-cycles is lower still).
    #[arg(long, default_value_t = 30)]
    max_cycles: u32,
    /// USD per run at most.
    #[arg(long, default_value_t = kaizen_loop::DEFAULT_BUDGET_USD)]
    budget_usd: f64,
    /// Seconds per run at most.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    /// The runs' permission mode: nobody is there to approve, and each run
    /// works in a scratch copy in the OS sandbox.
    #[arg(long, value_name = "MODE", default_value = "bypassPermissions")]
    permission_mode: String,
    /// One JSON object per line (per run, then per planner) instead of a
    /// table.
    #[arg(long)]
    json: bool,
}

/// Runs the evaluation; the exit code (1 when a task could not be run).
pub async fn eval(args: EvalArgs) -> anyhow::Result<u8> {
    let json = args.json;
    let options = EvalOptions {
        tasks: args.tasks,
        planners: args.planner,
        // Each run is this binary's `kaizen run`.
        kaizen: std::env::current_exe().context("finding the kaizen binary")?,
        model: args.model,
        provider: args.provider,
        max_cycles: args.max_cycles,
        budget_usd: args.budget_usd,
        timeout_secs: args.timeout,
        permission_mode: args.permission_mode,
    };
    let rows = eval::eval(&options, |row| {
        if json {
            println!("{}", serde_json::to_string(row)?);
        } else {
            let verdict = if row.passed { "passed" } else { "failed" };
            eprintln!("kaizen eval: {} with {}: {verdict}", row.task, row.planner);
        }
        Ok(())
    })
    .await?;
    if !json {
        print_table(&rows);
    }
    for summary in eval::summaries(&rows, &options.planners()) {
        print_summary(&summary, json);
    }
    Ok(0)
}

/// The rows as a table, for people.
fn print_table(rows: &[Row]) {
    println!(
        "{:<28} {:<22} {:<6} {:>6} {:>6} {:>9} {:>9} {:>9}",
        "task", "planner", "passed", "cycles", "calls", "in tok", "out tok", "cost $"
    );
    for row in rows {
        println!(
            "{:<28} {:<22} {:<6} {:>6} {:>6} {:>9} {:>9} {:>9.4}",
            row.task,
            row.planner,
            if row.passed { "yes" } else { "no" },
            row.cycles,
            row.model_calls,
            row.input_tokens,
            row.output_tokens,
            row.cost_usd
        );
    }
    println!();
}

/// A planner's totals: a line for people, or a JSON object.
fn print_summary(summary: &Summary, json: bool) {
    let Summary {
        planner,
        passed,
        tasks,
        model_calls,
        tokens,
        cost_usd,
    } = summary;
    if json {
        let summary = serde_json::json!({
            "summary": planner, "passed": passed, "tasks": tasks,
            "model_calls": model_calls, "tokens": tokens, "cost_usd": cost_usd,
        });
        println!("{summary}");
    } else {
        println!(
            "{planner}: {passed}/{tasks} passed, {model_calls} model calls, {tokens} tokens, ${cost_usd:.4}"
        );
    }
}
