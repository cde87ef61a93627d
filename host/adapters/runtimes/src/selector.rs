//! Choosing the runtime for a task: the one asked for, or with `auto` the
//! runtimes that can do what the task needs, cheapest and then fastest on
//! their recent record first; and running down that order, passing over a
//! runtime that is missing or fails before doing any work.

use crate::adapter::{Execution, ExecutionContext, RuntimeAdapter, RuntimeError};
use crate::history::History;
use kaizen_protocol::{CancellationToken, Event, Observer, PassedOver, RuntimeSelection};

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
    let model = context.model.as_deref();
    let mut left_out = Vec::new();
    let mut able = Vec::new();
    for runtime in runtimes {
        match unable(*runtime, context) {
            Some(why) => left_out.push(PassedOver {
                runtime: runtime.name().to_string(),
                why,
            }),
            None => able.push((*runtime, history.record(runtime.name(), model))),
        }
    }
    if able.is_empty() {
        return Err(format!(
            "no runtime can run this task: {}",
            listed(&left_out)
        ));
    }
    // Cheapest recent record first, then fastest; runtimes without a
    // record after those with one, in the default order (the sort is
    // stable).
    able.sort_by(|(_, a), (_, b)| match (a, b) {
        (Some(a), Some(b)) => a
            .median_cost_usd
            .total_cmp(&b.median_cost_usd)
            .then(a.median_duration_ms.cmp(&b.median_duration_ms)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let needs = needs(context);
    let order = able
        .iter()
        .enumerate()
        .map(|(rank, (runtime, record))| {
            let record = match record {
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

/// Each runtime passed over with why, for an error.
fn listed(passed: &[PassedOver]) -> String {
    passed
        .iter()
        .map(|p| format!("{} ({})", p.runtime, p.why))
        .collect::<Vec<_>>()
        .join("; ")
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
            why: format!("every runtime was passed over: {}", listed(&passed_over)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{Availability, ExecuteFuture, McpServer};
    use crate::capabilities::{CostReporting, RuntimeCapabilities, Vendor};
    use crate::history::PastRun;
    use kaizen_protocol::{RunResult, Status, TokensUsed};
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    /// A runtime that answers as told, for the selector alone.
    struct Fake {
        name: &'static str,
        vendors: Vec<Vendor>,
        mcp: bool,
        /// `None`: not installed; else the status it ends with, and
        /// whether it did work.
        outcome: Option<(Status, bool)>,
    }

    impl RuntimeAdapter for Fake {
        fn name(&self) -> &str {
            self.name
        }
        fn capabilities(&self) -> RuntimeCapabilities {
            RuntimeCapabilities {
                vendors: self.vendors.clone(),
                default_model: "m".into(),
                tools: Vec::new(),
                sandbox: Vec::new(),
                mcp: self.mcp,
                streaming: true,
                cost: CostReporting::Reported,
                resume: false,
                max_context_tokens: 1,
            }
        }
        fn availability(&self, _env: &BTreeMap<String, String>) -> Availability {
            Availability::ready(None, None)
        }
        fn execute<'a>(
            &'a self,
            _context: &'a ExecutionContext,
            _observer: &'a dyn Observer,
            _interrupt: &'a CancellationToken,
        ) -> ExecuteFuture<'a> {
            Box::pin(async move {
                let (status, worked) = self.outcome.ok_or_else(|| RuntimeError::Unavailable {
                    runtime: self.name.into(),
                    why: "not installed".into(),
                })?;
                Ok(Execution {
                    result: result(self.name, status, worked),
                    notes: Vec::new(),
                })
            })
        }
    }

    fn result(name: &str, status: Status, worked: bool) -> RunResult {
        RunResult {
            output: if worked { "done".into() } else { String::new() },
            status,
            cycles_used: 1,
            tokens_used: TokensUsed::default(),
            cost_usd: 0.0,
            duration_ms: 1,
            session_id: "s".into(),
            model_used: "m".into(),
            runtime_name: name.into(),
            tool_calls: Vec::new(),
            error_message: None,
            permission_denials: Vec::new(),
            compactions: 0,
            cost_estimated: false,
            runtime_selection: None,
        }
    }

    fn fake(name: &'static str, vendors: &[Vendor], outcome: Option<(Status, bool)>) -> Fake {
        Fake {
            name,
            vendors: vendors.to_vec(),
            mcp: true,
            outcome,
        }
    }

    fn context(model: Option<&str>) -> ExecutionContext {
        let mut context = ExecutionContext::new("task", "/w");
        context.model = model.map(String::from);
        context
    }

    fn names(plan: &Plan) -> Vec<&str> {
        plan.order.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// `requested` planned and run on `runtimes`, with no history, no
    /// model asked for, and nobody listening.
    async fn run(
        requested: &str,
        runtimes: &[&dyn RuntimeAdapter],
    ) -> Result<Execution, RuntimeError> {
        let context = context(None);
        let planned = plan(requested, runtimes, &context, &History::default()).unwrap();
        let notices = Notices::default();
        execute(
            &planned,
            runtimes,
            &context,
            &notices,
            &CancellationToken::new(),
        )
        .await
    }

    #[derive(Default)]
    struct Notices(Mutex<Vec<String>>);

    impl Observer for Notices {
        fn on_event(&self, event: &Event) {
            if let Event::Notice { text, .. } = event {
                self.0.lock().unwrap().push(text.clone());
            }
        }
    }

    #[test]
    fn a_named_runtime_is_the_plan_and_an_unknown_name_is_refused() {
        let a = fake("a", &[Vendor::Openai], None);
        let runtimes: [&dyn RuntimeAdapter; 1] = [&a];
        let history = History::default();
        let plan = plan("a", &runtimes, &context(None), &history).unwrap();
        assert_eq!(names(&plan), ["a"]);
        assert_eq!(plan.order[0].1, "asked for with --runtime");
        let err = plan_err("b", &runtimes);
        assert!(
            err.contains("no runtime is called `b`; the runtimes are a and auto"),
            "{err}"
        );
    }

    fn plan_err(name: &str, runtimes: &[&dyn RuntimeAdapter]) -> String {
        plan(name, runtimes, &context(None), &History::default()).unwrap_err()
    }

    #[test]
    fn auto_leaves_out_what_cannot_do_the_task_and_ranks_by_record() {
        let a = fake("a", &[Vendor::Anthropic], None);
        let b = Fake {
            mcp: false,
            ..fake("b", &[Vendor::Anthropic, Vendor::Openai], None)
        };
        let c = fake("c", &[Vendor::Openai], None);
        let runtimes: [&dyn RuntimeAdapter; 3] = [&a, &b, &c];
        let empty = History::default();
        // The model: only runtimes of its vendor; the default order.
        let plan_gpt = plan(AUTO, &runtimes, &context(Some("gpt-5")), &empty).unwrap();
        assert_eq!(names(&plan_gpt), ["b", "c"]);
        assert_eq!(plan_gpt.left_out[0].runtime, "a");
        assert!(
            plan_gpt.left_out[0]
                .why
                .contains("does not serve the model gpt-5")
        );
        // MCP: only runtimes that connect servers.
        let mut mcp = context(Some("gpt-5"));
        mcp.mcp_servers.push(McpServer {
            name: "s".into(),
            command: "s".into(),
            args: Vec::new(),
            env: BTreeMap::new(),
        });
        assert_eq!(names(&plan(AUTO, &runtimes, &mcp, &empty).unwrap()), ["c"]);
        // A record: cheapest first, then fastest, then those without one.
        let past = |runtime: &str, cost: f64, ms: u64| PastRun {
            runtime: runtime.into(),
            model: "gpt-5".into(),
            status: "complete".into(),
            cost_usd: cost,
            duration_ms: ms,
        };
        let history = History::of(vec![past("b", 0.2, 10), past("c", 0.1, 90)]);
        let ranked = plan(AUTO, &runtimes, &context(Some("gpt-5")), &history).unwrap();
        assert_eq!(names(&ranked), ["c", "b"]);
        assert!(
            ranked.order[0].1.contains("ranked first: median $0.1000"),
            "{}",
            ranked.order[0].1
        );
        // Nothing can: the reason names each.
        let err = plan(AUTO, &runtimes, &context(Some("gemini-2.5-pro")), &empty).unwrap_err();
        assert!(
            err.starts_with("no runtime can run this task: a (it does not serve"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn execution_falls_back_past_missing_runtimes_and_those_that_did_no_work() {
        let missing = fake("missing", &[Vendor::Openai], None);
        let idle = fake("idle", &[Vendor::Openai], Some((Status::Error, false)));
        let worker = fake("worker", &[Vendor::Openai], Some((Status::Error, true)));
        let last = fake("last", &[Vendor::Openai], Some((Status::Complete, true)));
        let runtimes: [&dyn RuntimeAdapter; 4] = [&missing, &idle, &worker, &last];
        let context = context(Some("gpt-5"));
        let plan = plan(AUTO, &runtimes, &context, &History::default()).unwrap();
        let notices = Notices::default();
        let interrupt = CancellationToken::new();
        let done = execute(&plan, &runtimes, &context, &notices, &interrupt)
            .await
            .unwrap();
        // `worker` failed after doing work: its result stands.
        assert_eq!(done.result.runtime_name, "worker");
        let selection = done.result.runtime_selection.unwrap();
        assert_eq!(selection.chosen, "worker");
        let passed: Vec<&str> = selection
            .passed_over
            .iter()
            .map(|p| p.runtime.as_str())
            .collect();
        assert_eq!(passed, ["missing", "idle"]);
        assert!(
            selection.passed_over[1]
                .why
                .contains("before doing any work")
        );
        let notices = notices.0.into_inner().unwrap();
        assert_eq!(notices.len(), 2);
        assert!(notices[0].ends_with("trying idle next"), "{notices:?}");
    }

    #[tokio::test]
    async fn a_run_stopped_by_a_limit_is_not_tried_elsewhere() {
        let slow = fake("slow", &[Vendor::Openai], Some((Status::Timeout, false)));
        let next = fake("next", &[Vendor::Openai], Some((Status::Complete, true)));
        let runtimes: [&dyn RuntimeAdapter; 2] = [&slow, &next];
        let done = run(AUTO, &runtimes).await.unwrap();
        assert_eq!(done.result.runtime_name, "slow");
        assert_eq!(done.result.status, Status::Timeout);
    }

    #[tokio::test]
    async fn a_lone_runtime_that_cannot_run_is_its_own_error() {
        let missing = fake("missing", &[Vendor::Openai], None);
        let runtimes: [&dyn RuntimeAdapter; 1] = [&missing];
        let err = run("missing", &runtimes).await.unwrap_err();
        assert_eq!(err.to_string(), "missing is not available: not installed");
        // The last of several that did no work stands as it is.
        let idle = fake("idle", &[Vendor::Openai], Some((Status::Error, false)));
        let runtimes: [&dyn RuntimeAdapter; 2] = [&missing, &idle];
        let done = run(AUTO, &runtimes).await.unwrap();
        assert_eq!(done.result.status, Status::Error);
        assert_eq!(done.result.runtime_name, "idle");
    }
}
