//! Running a response's tool calls through the guard. Consecutive
//! read-only calls run concurrently; anything that may change state runs
//! alone, in order. Results always come back in call order with their ids.

use crate::admit::{Admission, Gatekeeper};
use crate::calls::{CallOutcome, PendingCall, arguments_value};
use crate::step_executor::ToolStepped;
use kaizen_protocol::{StepKey, StepKind};
use kaizen_tools::CallContext;
use std::time::{Duration, Instant};

/// Runs `calls` through the guard, grouping consecutive read-only ones to
/// run together. Each group's calls are admitted one after another (a
/// question to the user is one at a time), run, then handed to the
/// post-call hooks in order.
pub(crate) async fn run_calls(gate: &Gatekeeper<'_>, calls: Vec<PendingCall>) -> Vec<CallOutcome> {
    let registry = gate.registry;
    let read_only = |call: &PendingCall| {
        // An unknown tool fails at once without side effects.
        registry
            .get(&call.name)
            .is_none_or(|tool| tool.spec().read_only)
    };
    let mut outcomes = Vec::with_capacity(calls.len());
    let mut rest = calls.as_slice();
    while let Some(first) = rest.first() {
        let group = if read_only(first) {
            rest.iter().take_while(|c| read_only(c)).count()
        } else {
            1
        };
        let (now, later) = rest.split_at(group);
        let mut admitted = Vec::with_capacity(now.len());
        for call in now {
            admitted.push((call, gate.admit(call).await));
        }
        let runs = admitted
            .into_iter()
            .map(|(call, admission)| run_one(gate, call, admission));
        let mut done = futures::future::join_all(runs).await;
        for outcome in done.iter_mut() {
            let input = outcome.input.clone();
            gate.after(outcome, &input).await;
        }
        outcomes.extend(done);
        rest = later;
    }
    outcomes
}

async fn run_one(gate: &Gatekeeper<'_>, call: &PendingCall, admission: Admission) -> CallOutcome {
    let (input, context) = match admission {
        Admission::Run { input, context } => (input, context),
        Admission::Refused {
            error,
            denied,
            context,
        } => {
            return CallOutcome {
                call: call.clone(),
                input: arguments_value(&call.arguments),
                result: Err(error),
                duration: Duration::ZERO,
                denied,
                context,
            };
        }
    };
    let ctx = CallContext {
        call_id: call.id.clone(),
        ..gate.ctx.clone()
    };
    let key = StepKey {
        session: ctx.session_id.clone(),
        cycle: gate.cycle,
        kind: StepKind::Tool,
        id: call.id.clone(),
    };
    let started = Instant::now();
    // Through the registry, which checks the input once more (cheap) and
    // bounds the output's size. What the call spent travels with its
    // result: a step a journal hands back is charged as it was.
    let dispatch = Box::pin(async {
        let result = gate.registry.call_value(&ctx, &call.name, &input).await;
        let charged = gate
            .scope
            .map(|scope| scope.charged_for(&call.id))
            .unwrap_or_default();
        ToolStepped { result, charged }
    });
    let stepped = gate.steps.tool(key, dispatch).await;
    if let Some(scope) = gate.scope {
        scope.recharge(&call.id, &stepped.charged);
    }
    let result = stepped.result;
    CallOutcome {
        call: call.clone(),
        input,
        result,
        duration: started.elapsed(),
        denied: false,
        context,
    }
}
