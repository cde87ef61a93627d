//! Choosing the runtime for a task: the one asked for, or with `auto` the
//! runtimes that can do what the task needs, cheapest and then fastest on
//! their recent record first; and running down that order, passing over a
//! runtime that is missing or fails before doing any work.

use crate::adapter::{Execution, ExecutionContext, RuntimeAdapter, RuntimeError};
use crate::history::History;
use kaizen_runtime::{CancellationToken, Event, Observer, PassedOver, RuntimeSelection};

/// The name that asks the selector to choose.
pub const AUTO: &str = "auto";

/// The runtimes to try, in order, each with why it is there.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What was asked for.
    pub requested: String,
    /// Candidates in the order they are tried, with the reason each ranks
    /// where it does.
    pub order: Vec<(String, String)>,
    /// Runtimes left out before running (they cannot do the task).
    pub left_out: Vec<PassedOver>,
}

/// The order in which `runtimes` are tried for `context`, or why none can
/// run it. `runtimes` come in the default order (the first is preferred
/// when no runtime has a record).
pub fn plan(
    requested: &str,
    runtimes: &[&dyn RuntimeAdapter],
    context: &ExecutionContext,
    history: &History,
) -> Result<Plan, String> {
    if requested != AUTO {
        let known: Vec<&str> = runtimes.iter().map(|r| r.name()).collect();
        if !known.contains(&requested) {
            return Err(format!(
                "no runtime is called `{requested}`; the runtimes are {} and {AUTO}",
                known.join(", ")
            ));
        }
        return Ok(Plan {
            requested: requested.to_string(),
            order: vec![(
                requested.to_string(),
                "asked for with --runtime".to_string(),
            )],
            left_out: Vec::new(),
        });
    }
    let mut left_out = Vec::new();
    let mut able = Vec::new();
    for (index, runtime) in runtimes.iter().enumerate() {
        match unable(*runtime, context) {
            Some(why) => left_out.push(PassedOver {
                runtime: runtime.name().to_string(),
                why,
            }),
            None => able.push((index, *runtime)),
        }
    }
    if able.is_empty() {
        return Err(format!(
            "no runtime can run this task: {}",
            left_out
                .iter()
                .map(|p| format!("{} ({})", p.runtime, p.why))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let model = context.model.as_deref();
    // Cheapest recent record first, then fastest; runtimes without a
    // record after those with one, in the default order.
    able.sort_by(|(ia, a), (ib, b)| {
        let (ra, rb) = (
            history.record(a.name(), model),
            history.record(b.name(), model),
        );
        match (ra, rb) {
            (Some(ra), Some(rb)) => ra
                .median_cost_usd
                .total_cmp(&rb.median_cost_usd)
                .then(ra.median_duration_ms.cmp(&rb.median_duration_ms)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => ia.cmp(ib),
        }
    });
    let needs = needs(context);
    let order = able
        .iter()
        .enumerate()
        .map(|(rank, (_, runtime))| {
            let record = match history.record(runtime.name(), model) {
                Some(r) => format!(
                    "median ${:.4} and {} ms over its last {} completed runs",
                    r.median_cost_usd, r.median_duration_ms, r.runs
                ),
                None => "no completed runs on record".to_string(),
            };
            let place = if rank == 0 { "ranked first" } else { "next" };
            (
                runtime.name().to_string(),
                format!("auto: it has what the task needs ({needs}); {place}: {record}"),
            )
        })
        .collect();
    Ok(Plan {
        requested: AUTO.to_string(),
        order,
        left_out,
    })
}

/// What the task needs of a runtime, for the reason.
fn needs(context: &ExecutionContext) -> String {
    let mut needs = vec![match &context.model {
        Some(model) => format!("the model {model}"),
        None => "its default model".to_string(),
    }];
    if !context.mcp_servers.is_empty() {
        needs.push("MCP".to_string());
    }
    needs.join(", ")
}

/// Why `runtime` cannot run the task, if it cannot.
fn unable(runtime: &dyn RuntimeAdapter, context: &ExecutionContext) -> Option<String> {
    let capabilities = runtime.capabilities();
    if let Some(model) = &context.model
        && !capabilities.serves(model)
    {
        return Some(format!("it does not serve the model {model}"));
    }
    if !context.mcp_servers.is_empty() && !capabilities.mcp {
        return Some("it cannot connect MCP servers".to_string());
    }
    None
}

/// Runs the task on the plan's runtimes in order until one does work,
/// reporting a notice for each one passed over. The result says which ran
/// it and why.
pub async fn execute(
    plan: &Plan,
    runtimes: &[&dyn RuntimeAdapter],
    context: &ExecutionContext,
    observer: &dyn Observer,
    interrupt: &CancellationToken,
) -> Result<Execution, RuntimeError> {
    let mut passed_over = plan.left_out.clone();
    let mut last_error = None;
    for (position, (name, reason)) in plan.order.iter().enumerate() {
        let Some(runtime) = runtimes.iter().find(|r| r.name() == name) else {
            continue;
        };
        let more = position + 1 < plan.order.len();
        let why = match runtime.execute(context, observer, interrupt).await {
            Ok(mut execution) if !(more && execution.did_no_work()) || interrupt.is_cancelled() => {
                execution.result.runtime_selection = Some(RuntimeSelection {
                    requested: plan.requested.clone(),
                    chosen: name.clone(),
                    reason: reason.clone(),
                    passed_over,
                });
                return Ok(execution);
            }
            Ok(execution) => format!(
                "it stopped ({}) before doing any work: {}",
                execution.result.status.as_str(),
                execution.result.error_message.unwrap_or_default()
            ),
            Err(err) => {
                let why = err.to_string();
                last_error = Some(err);
                why
            }
        };
        if more {
            observer.on_event(&Event::Notice {
                source: "runtime".to_string(),
                text: format!("{why}; trying {} next", plan.order[position + 1].0),
            });
        }
        passed_over.push(PassedOver {
            runtime: name.clone(),
            why,
        });
    }
    match (plan.order.len(), last_error) {
        (1, Some(err)) => Err(err),
        _ => Err(RuntimeError::Unavailable {
            runtime: plan.requested.clone(),
            why: format!(
                "every runtime was passed over: {}",
                passed_over
                    .iter()
                    .map(|p| format!("{} ({})", p.runtime, p.why))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }),
    }
}
