//! THINK: the model calls of a cycle, as the planner shapes them (one
//! streamed call, or several candidates of which it picks one), each
//! charged to the run's budget as it returns. The conversation moves into
//! the request and back, since copying it on every call would make a long
//! session quadratic.

use crate::bounded::bounded;
use crate::stages::plan::{Driver, Shaping};
use crate::turn::{Ending, Turn};
use kaizen_llm::{Request, Response, StreamEvent, ToolDefinition};
use kaizen_protocol::{Event, Status, StepKey, StepKind};
use std::borrow::Cow;

/// THINK as the planner shaped it: the response and its price.
pub(crate) async fn think(
    turn: &mut Turn<'_>,
    system: &str,
    tools: &mut Vec<ToolDefinition>,
    shaping: &Shaping,
    planner: Option<&mut Driver>,
) -> Result<(Response, f64), Ending> {
    let system: Cow<str> = match &shaping.system_additions {
        Some(more) => Cow::Owned(format!("{system}\n\n{more}")),
        None => Cow::Borrowed(system),
    };
    let Some(planner) = planner.filter(|_| shaping.candidates > 1) else {
        let mut answers = think_n(turn, &system, tools, 1, true).await?;
        return Ok(answers.remove(0));
    };
    let answers = think_n(turn, &system, tools, shaping.candidates, false).await?;
    let (response, cost) = planner.select(turn, answers, tools).await;
    // The candidates were not streamed: the chosen one's text is shown
    // now.
    let text = response.text();
    if !text.is_empty() {
        turn.observer.on_event(&Event::TextDelta { text });
    }
    Ok((response, cost))
}

/// `n` model calls on the same conversation at once, streamed to the
/// observer when `stream`; every response and its price, in call order.
async fn think_n(
    turn: &mut Turn<'_>,
    system: &str,
    tools: &mut Vec<ToolDefinition>,
    n: u32,
    stream: bool,
) -> Result<Vec<(Response, f64)>, Ending> {
    let request = Request {
        model: turn.config.model.clone(),
        system: system.to_string(),
        messages: std::mem::take(&mut turn.state.messages),
        tools: std::mem::take(tools),
        max_tokens: turn.config.max_tokens,
        temperature: None,
    };
    let observer = turn.observer;
    let sink = |event: StreamEvent| match event {
        StreamEvent::TextDelta(text) if stream => observer.on_event(&Event::TextDelta { text }),
        StreamEvent::Retrying { attempt, error } => {
            observer.on_event(&Event::Retry { attempt, error })
        }
        StreamEvent::FallingBack { from, to, error } => {
            observer.on_event(&Event::Fallback { from, to, error })
        }
        StreamEvent::TextDelta(_) | StreamEvent::ToolCallStarted { .. } => {}
    };
    let key = StepKey {
        session: turn.state.session_id.clone(),
        cycle: turn.state.cycles + 1,
        kind: StepKind::Model,
        id: n.max(1).to_string(),
    };
    let calls = turn
        .config
        .steps
        .model(key, turn.provider.complete_n(&request, n.max(1), &sink));
    let outcome = bounded(calls, turn.scope.deadline, turn.interrupt).await;
    turn.state.messages = request.messages;
    *tools = request.tools;
    let outcomes = match outcome {
        Ok(outcomes) => outcomes,
        Err(cut) => return Err(turn.cut_ending(cut, "waiting for the model")),
    };
    let mut answers = Vec::with_capacity(outcomes.len());
    let mut failure = None;
    for outcome in outcomes {
        match outcome {
            Ok(response) => {
                let cost = (turn.pricing)(&response.model, &response.usage);
                turn.scope.charge(&response.usage, cost);
                answers.push((response, cost));
            }
            Err(err) => failure = Some(err.message),
        }
    }
    // A failed candidate is dropped while another answered.
    match failure {
        Some(message) if answers.is_empty() => Err((Status::Error, Some(message))),
        _ => Ok(answers),
    }
}
