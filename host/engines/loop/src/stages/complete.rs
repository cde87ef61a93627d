//! COMPLETE: a plugin's completion (the contract's `llm`), asked for by
//! model role from within a step, a hook or a planner call and served by
//! it (`serve.rs`) through the session's provider, so it shares the
//! session's budget, deadline and interrupt. The operator's caps
//! (`plugin_llm.rs`) bound the roles each plugin may use, its share of
//! the run's budget and its calls.

use crate::bounded::{Cut, bounded};
use crate::links::CompletionJob;
use crate::plugin_llm::{Refusal, check_role};
use crate::scope::Scope;
use crate::turn::Turn;
use kaizen_llm::{Block, Message, Request, Role, StreamEvent, Usage};
use kaizen_protocol::Event;
use kaizen_tools::{Completion, CompletionError, CompletionRequest};

/// Runs one plugin's completion within `scope` and answers its caller.
pub(crate) async fn answer(turn: &Turn<'_>, scope: &Scope, job: CompletionJob) {
    let role = job.request.model_role.clone();
    let asked = Asked {
        caller: &job.caller,
        call_id: &job.call_id,
        role: role.as_deref().unwrap_or("main"),
    };
    let answer = complete(turn, scope, &asked, job.request).await;
    let _ = job.reply.send(answer);
}

/// Who asked for a completion, and for which role.
struct Asked<'a> {
    caller: &'a str,
    call_id: &'a str,
    role: &'a str,
}

/// Checks the caller's caps, reserves the call's cost at worst, runs it
/// and settles what it cost.
async fn complete(
    turn: &Turn<'_>,
    scope: &Scope,
    asked: &Asked<'_>,
    request: CompletionRequest,
) -> Result<Completion, CompletionError> {
    let (caller, role) = (asked.caller, asked.role);
    let caps = turn.config.plugin_llm.caps_for(caller);
    check_role(caller, role, caps)?;
    let budget = turn.config.budget_usd;
    let spent = scope.spent.cost();
    if spent >= budget {
        return Err(CompletionError::BudgetExceeded(format!(
            "the run spent ${spent:.4} of its ${budget:.4} budget"
        )));
    }
    let share = caps.budget_share * budget;
    let model = turn.config.models.model_for(role, &turn.config.model);
    let max_tokens = request
        .max_tokens
        .unwrap_or(turn.config.max_tokens)
        .min(turn.config.max_tokens);
    let most = (turn.pricing)(model, &worst_usage(&request, max_tokens));
    let reserved = scope
        .plugins
        .reserve(caller, most, share, budget, spent, caps.max_calls);
    let refused = |why: String| Err(CompletionError::BudgetExceeded(why));
    match reserved {
        Ok(()) => {}
        Err(Refusal::Calls(calls)) => {
            return refused(format!(
                "plugin `{caller}` made {calls} completions, its most in a run (max-calls = {} in [plugin-llm])",
                caps.max_calls
            ));
        }
        Err(Refusal::Share(own)) => {
            return refused(format!(
                "plugin `{caller}` spent or holds ${own:.4} on completions; this one (up to ${most:.4}) could take it past its share of the run's budget (${share:.4}, budget-share = {})",
                caps.budget_share
            ));
        }
        Err(Refusal::Budget(held)) => {
            return refused(format!(
                "the run spent ${spent:.4} and completions in flight hold ${held:.4} of its ${budget:.4} budget; this one (up to ${most:.4}) could go past it"
            ));
        }
    }
    let request = model_request(model, request, max_tokens);
    let answer = complete_reserved(turn, scope, asked, request).await;
    let cost = answer.as_ref().map_or(0.0, |c| c.cost_usd);
    scope.plugins.settle(caller, most, cost);
    answer
}

/// What a call costs at worst: its whole prompt (a token per three bytes,
/// more than any tokenizer makes of text) and every output token it may
/// ask for.
fn worst_usage(request: &CompletionRequest, max_tokens: u32) -> Usage {
    let prompt_bytes: usize = request.system.as_ref().map_or(0, String::len)
        + request
            .messages
            .iter()
            .map(|m| m.content.len())
            .sum::<usize>();
    Usage {
        input_tokens: (prompt_bytes as u64).div_ceil(3),
        output_tokens: u64::from(max_tokens),
        ..Usage::default()
    }
}

/// The provider's request for a plugin's completion on `model`.
fn model_request(model: &str, request: CompletionRequest, max_tokens: u32) -> Request {
    let messages = request
        .messages
        .into_iter()
        .map(|message| Message {
            role: if message.assistant {
                Role::Assistant
            } else {
                Role::User
            },
            content: vec![Block::Text {
                text: message.content,
            }],
        })
        .collect();
    Request {
        model: model.to_string(),
        system: request.system.unwrap_or_default(),
        messages,
        tools: Vec::new(),
        max_tokens,
        temperature: request.temperature,
    }
}

/// Runs a completion whose cost at worst is reserved.
async fn complete_reserved(
    turn: &Turn<'_>,
    scope: &Scope,
    asked: &Asked<'_>,
    request: Request,
) -> Result<Completion, CompletionError> {
    // A plugin's completion is not the answer: its text is not streamed,
    // only its cost reported (and a fallback, if any).
    let observer = turn.observer;
    let sink = |event: StreamEvent| {
        if let StreamEvent::FallingBack { from, to, error } = event {
            observer.on_event(&Event::Fallback { from, to, error });
        }
    };
    let call = turn.provider.complete(&request, &sink);
    let response = match bounded(call, scope.deadline, turn.interrupt).await {
        Ok(Ok(response)) => response,
        Ok(Err(err)) => return Err(CompletionError::Provider(err.message)),
        Err(Cut::Timeout) => {
            return Err(CompletionError::Cancelled(
                "the run's time limit ran out".into(),
            ));
        }
        Err(Cut::Interrupted) => {
            return Err(CompletionError::Cancelled("the run was interrupted".into()));
        }
    };
    let cost = (turn.pricing)(&response.model, &response.usage);
    scope.charge_call(Some(asked.call_id), &response.usage, cost);
    observer.on_event(&Event::PluginCompletion {
        plugin: asked.caller.to_string(),
        call_id: asked.call_id.to_string(),
        role: asked.role.to_string(),
        model: response.model.clone(),
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
        cost_usd: cost,
    });
    Ok(Completion {
        text: response.text(),
        model: response.model,
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
        cost_usd: cost,
    })
}
