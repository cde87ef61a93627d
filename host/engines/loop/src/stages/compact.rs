//! COMPACT: when the next request would fill too much of the model's
//! context window, the older part of the conversation is replaced, first
//! by the same messages with their long tool results elided, and when that
//! is not enough by a summary (`summary.rs`). The recent turns stay
//! verbatim. `PreCompact` hooks may add instructions for the summary or
//! keep the conversation whole. A compaction is a journal entry, so a
//! resumed or forked session sees what the model saw, and the log keeps
//! everything it replaced.

use crate::context::{self, ContextMeter, Plan, request_tokens};
use crate::hook_points::{HookPoint, fire, stopped_by};
use crate::session_journal::Entry;
use crate::stages::summary::{Compacted, summarize};
use crate::turn::{Ending, Turn};
use kaizen_hooks::HookAction;
use kaizen_llm::{ToolDefinition, tokens};
use kaizen_protocol::Event;

/// Compacts the conversation when the next request would be over the
/// policy's limit (`trigger`: `auto`), or when the inbox asks (`manual`);
/// a hook that stops the session, the time limit or an interrupt during
/// the summary ends the run.
pub(crate) async fn maybe_compact(
    turn: &mut Turn<'_>,
    system: &str,
    tools: &[ToolDefinition],
    meter: &mut ContextMeter,
) -> Result<(), Ending> {
    let config = turn.config;
    let policy = &config.context;
    let model = config.model.as_str();
    let asked = config
        .inbox
        .as_ref()
        .and_then(|inbox| inbox.take_compaction());
    let instructions = asked
        .as_ref()
        .filter(|given| !given.is_empty())
        .map(|given| given.join("\n"));
    let asked = asked.is_some();
    if !asked && policy.window == 0 {
        return Ok(());
    }
    let limit = policy.limit();
    let mut estimate = meter.estimate(model, system, tools, &turn.state.messages);
    if !asked {
        // Near the limit the count decides: make it exact where it can be.
        if estimate >= limit / 2 && tokens::has_tokenizer(model) && !tokens::tokenizer_loaded() {
            let _ = tokio::task::spawn_blocking(tokens::load_tokenizer).await;
            meter.reset();
            estimate = meter.estimate(model, system, tools, &turn.state.messages);
        }
        if estimate <= limit {
            return Ok(());
        }
    }
    let trigger = if asked { "manual" } else { "auto" };
    compact(turn, system, tools, (trigger, estimate), instructions).await?;
    meter.reset();
    Ok(())
}

/// Compacts the conversation now, whatever its size (`kaizen sessions
/// compact`): summarised, as the run would see it next. The compaction's
/// event, or `None` when nothing was compacted (a hook kept it whole, one
/// turn only, the summary failed: a notice says).
pub(crate) async fn compact_now(turn: &mut Turn<'_>) -> Result<Option<Event>, String> {
    let system = turn.system_prompt();
    let tools = turn.tool_definitions();
    let model = turn.config.model.as_str();
    let estimate = request_tokens(model, &system, &tools, &turn.state.messages);
    let compacted = compact(turn, &system, &tools, ("manual", estimate), None)
        .await
        .map_err(|(_, why)| why.unwrap_or_else(|| "the compaction was cut off".into()))?;
    if let Some(journal) = turn.journal {
        journal.flush();
    }
    Ok(compacted)
}

/// Compacts the conversation now: the `PreCompact` hooks, then the
/// elided or summarised head (a manual compaction always summarises,
/// keeping what the hooks' context and the request's `asked` instructions
/// say); journaled, and reported by the event it returns.
async fn compact(
    turn: &mut Turn<'_>,
    system: &str,
    tools: &[ToolDefinition],
    (trigger, estimate): (&str, u64),
    asked: Option<String>,
) -> Result<Option<Event>, Ending> {
    let config = turn.config;
    let (policy, model) = (&config.context, config.model.as_str());
    let point = HookPoint::PreCompact {
        trigger,
        tokens: estimate,
        window: policy.window,
    };
    let hooks = fire(turn, point).await;
    match &hooks.action {
        HookAction::Stop(reason) => return Err(stopped_by(&hooks.decided_by, reason)),
        HookAction::Deny(reason) => {
            let by = hooks.decided_by.as_deref().unwrap_or("a hook");
            notice(
                turn,
                format!("the PreCompact hook {by} kept the conversation whole: {reason}"),
            );
            return Ok(None);
        }
        _ => {}
    }
    let keep = (policy.keep_recent * policy.window as f64) as u64;
    let Some(plan) = context::plan(model, &turn.state.messages, keep, policy.elide_over) else {
        notice(
            turn,
            format!(
                "the conversation is near the model's window ({estimate} of {} tokens) but holds nothing older than the last turn to compact",
                policy.window
            ),
        );
        return Ok(None);
    };
    let replaced = plan.cut;
    let elide_only = trigger != "manual" && elided_enough(turn, system, tools, &plan);
    let compacted = match elide_only {
        true => Some(Compacted::elided(plan)),
        false => {
            let instructions = match (hooks.context(), asked) {
                (Some(hooks), Some(asked)) => Some(format!("{asked}\n{hooks}")),
                (hooks, asked) => asked.or(hooks),
            };
            summarized_or_elided(turn, plan, instructions).await?
        }
    };
    let Some(compacted) = compacted else {
        return Ok(None);
    };
    let (summarized, cost_usd) = (compacted.summarized, compacted.cost_usd);
    turn.commit(Entry::Compaction {
        head: compacted.head,
        kept_from: replaced,
        summarized,
        usage: compacted.usage,
        cost_usd,
    });
    let after = request_tokens(model, system, tools, &turn.state.messages);
    let event = Event::Compaction {
        trigger: trigger.to_string(),
        tokens_before: estimate,
        tokens_after: after,
        window: policy.window,
        replaced,
        summarized,
        model: compacted.model,
        cost_usd,
    };
    turn.observer.on_event(&event);
    Ok(Some(event))
}

/// The summary of `plan`'s messages; when it fails, the messages with
/// their long results elided, if any were (else nothing: the
/// conversation goes on whole).
async fn summarized_or_elided(
    turn: &Turn<'_>,
    plan: Plan,
    instructions: Option<String>,
) -> Result<Option<Compacted>, Ending> {
    match summarize(turn, &plan, instructions).await? {
        Ok(compacted) => Ok(Some(compacted)),
        Err(why) => {
            notice(
                turn,
                format!(
                    "compacting the conversation failed ({why}); it goes on {}",
                    if plan.elisions > 0 {
                        "with long results elided"
                    } else {
                        "whole"
                    }
                ),
            );
            Ok((plan.elisions > 0).then(|| Compacted::elided(plan)))
        }
    }
}

/// Whether eliding the older results alone brings the next request under
/// the limit.
fn elided_enough(turn: &Turn<'_>, system: &str, tools: &[ToolDefinition], plan: &Plan) -> bool {
    if plan.elisions == 0 {
        return false;
    }
    let model = turn.config.model.as_str();
    let head = request_tokens(model, system, tools, &plan.elided);
    let tail = context::message_tokens(model, &turn.state.messages[plan.cut..]);
    head + tail <= turn.config.context.limit()
}

fn notice(turn: &Turn<'_>, text: String) {
    turn.notice("compaction", text);
}
