//! Serving a step: while a step's work runs (its tool calls, a hook, a
//! planner call), the sub-agents and plugin completions it asks for run
//! beside it, several at once when calls run concurrently, and are
//! charged to the scope the step gives.

use crate::links::{CompletionJob, SubAgentJob, completion_channel, sub_agent_channel};
use crate::scope::{Meter, Scope};
use crate::stages::complete;
use crate::turn::Turn;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use kaizen_llm::Usage;
use kaizen_tools::CompletionLink;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

/// Drives `work` to its end while serving the sub-agents and completions
/// it asks for within `scope`.
pub(crate) async fn serve<T>(
    turn: &Turn<'_>,
    scope: &Scope,
    work: impl Future<Output = T>,
    mut sub_agents: UnboundedReceiver<SubAgentJob>,
    mut completions: UnboundedReceiver<CompletionJob>,
) -> T {
    let mut work = std::pin::pin!(work);
    let mut running = FuturesUnordered::new();
    loop {
        tokio::select! {
            done = &mut work => return done,
            Some(job) = sub_agents.recv() => match turn.delegate {
                Some(delegate) => running.push(delegate(turn, scope, job)),
                // Unreachable: a turn without a delegate gives its tools
                // no sub-agent link. Dropping the job answers the call.
                None => drop(job),
            },
            Some(job) = completions.recv() => {
                running.push(complete::answer(turn, scope, job).boxed());
            }
            Some(()) = running.next(), if !running.is_empty() => {}
        }
    }
}

/// Runs `work`, given the link its completions go through, while serving
/// them within the run's scope (outside a step: a planner's call, a hook
/// on the session's own events); its answer and what they spent.
pub(crate) async fn with_completions<T, F>(
    turn: &Turn<'_>,
    work: impl FnOnce(CompletionLink) -> F,
) -> (T, Usage, f64)
where
    F: Future<Output = T>,
{
    let (link, requests) = completion_channel();
    // Outside a step nothing starts sub-agents: this channel stays empty.
    let (_, no_agents) = sub_agent_channel();
    let tally = Arc::new(Meter::default());
    let counted = Scope {
        tally: Some(tally.clone()),
        ..turn.scope.clone()
    };
    let answer = serve(turn, &counted, work(link), no_agents, requests).await;
    let (usage, cost) = tally.take();
    (answer, usage, cost)
}
