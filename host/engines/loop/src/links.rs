//! How a step's tool calls reach back to the loop: a plugin's completion
//! and a sub-agent are asked for over a channel whose other end the step
//! serves (`serve.rs`), so that they share the run's provider, budget,
//! deadline and interrupt. Here are the tools' ends and the requests that
//! travel on them.

use kaizen_tools::{
    Completion, CompletionError, CompletionFuture, CompletionLink, CompletionRequest, Completions,
    SubAgentFuture, SubAgentLink, SubAgentReport, SubAgentRequest, SubAgents,
};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A sub-agent a tool call asked for, waiting to run.
pub(crate) struct SubAgentJob {
    /// The tool call that asked.
    pub call_id: String,
    pub request: SubAgentRequest,
    pub reply: oneshot::Sender<Result<SubAgentReport, String>>,
}

/// The tools' end of a step's sub-agent channel.
struct SubAgentRequests(mpsc::UnboundedSender<SubAgentJob>);

impl SubAgents for SubAgentRequests {
    fn run(&self, call_id: &str, request: SubAgentRequest) -> SubAgentFuture {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(SubAgentJob {
            call_id: call_id.to_string(),
            request,
            reply,
        });
        Box::pin(async move {
            let gone = || "the step that ran this call has ended; no sub-agent ran".to_string();
            sent.map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        })
    }
}

/// A sub-agent link for one step's tool calls and the receiver the step
/// serves.
pub(crate) fn sub_agent_channel() -> (SubAgentLink, mpsc::UnboundedReceiver<SubAgentJob>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (
        SubAgentLink::new(Arc::new(SubAgentRequests(sender))),
        receiver,
    )
}

/// A completion a tool call (or a hook, or a planner) asked for, waiting
/// to run.
pub(crate) struct CompletionJob {
    /// The plugin that asked.
    pub caller: String,
    /// The tool call it asked within.
    pub call_id: String,
    pub request: CompletionRequest,
    pub reply: oneshot::Sender<Result<Completion, CompletionError>>,
}

/// The tools' end of a step's completion channel.
struct CompletionRequests(mpsc::UnboundedSender<CompletionJob>);

impl Completions for CompletionRequests {
    fn complete(
        &self,
        caller: &str,
        call_id: &str,
        request: CompletionRequest,
    ) -> CompletionFuture {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(CompletionJob {
            caller: caller.to_string(),
            call_id: call_id.to_string(),
            request,
            reply,
        });
        Box::pin(async move {
            let gone =
                || CompletionError::Cancelled("the step that ran this call has ended".to_string());
            sent.map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        })
    }
}

/// A completion link for one step's tool calls and the receiver the step
/// serves.
pub(crate) fn completion_channel() -> (CompletionLink, mpsc::UnboundedReceiver<CompletionJob>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (
        CompletionLink::new(Arc::new(CompletionRequests(sender))),
        receiver,
    )
}
