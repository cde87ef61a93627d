//! Questions for a person, asked from a turn on a worker and waited for
//! durably.
//!
//! A turn that needs a person's word (a tool call to approve, a plugin's
//! or `AskUserQuestion`'s multiple-choice questions) waits on an
//! awakeable ([`RestateSteps::wait`]). The question goes to the session's
//! stream under the awakeable's id, where the submitting terminal (or
//! `kaizen approve`) finds it and answers through the engine
//! ([`crate::Cluster::answer`]). The journal keeps the wait: when the
//! worker is lost, the turn run again on another waits on the same id, so
//! an answer given meanwhile is honoured.

use crate::restate_steps::RestateSteps;
use crate::stream::EventStream;
use kaizen_protocol::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use std::sync::{Arc, OnceLock};

// The questions live in their own module because the stream carries them
// too: kept here, the stream and the asker would import each other.
pub use crate::question::{Answer, Choices, Question};

/// Asks the turn's questions through the engine, one at a time. The
/// worker's approver for tool calls; a hosted run routes plugins'
/// questions here.
pub struct Asker {
    steps: RestateSteps,
    stream: OnceLock<Arc<EventStream>>,
    /// Held while a question is open; counts the turn's questions, which
    /// name their waits (the same on every run of the turn).
    asked: tokio::sync::Mutex<u64>,
}

impl Asker {
    /// Asks through `steps`' handler.
    pub fn new(steps: RestateSteps) -> Self {
        Self {
            steps,
            stream: OnceLock::new(),
            asked: tokio::sync::Mutex::new(0),
        }
    }

    /// Where questions are published: the turn's stream, once the session
    /// has one.
    pub fn publish_to(&self, stream: Arc<EventStream>) {
        let _ = self.stream.set(stream);
    }

    /// Asks `question` and waits, durably, for the answer.
    pub async fn ask(&self, question: Question) -> Result<Answer, String> {
        let stream = self
            .stream
            .get()
            .ok_or("the turn has no stream to ask on yet")?;
        let mut asked = self.asked.lock().await;
        *asked += 1;
        let waiting = self.steps.wait(&format!("ask/{asked}")).await;
        let id = waiting.id.clone();
        stream.asked(&id, &question);
        let answer = waiting.answer().await?;
        stream.answered(&id);
        serde_json::from_value(answer.clone())
            .map_err(|err| format!("the answer to {id} is not one Kaizen reads ({err}): {answer}"))
    }
}

impl Approver for Asker {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            match self.ask(Question::Approval(request.clone())).await {
                Ok(Answer::Once) => Approval::Once,
                Ok(Answer::Always) => Approval::Always,
                Ok(Answer::Deny { message }) => Approval::Deny(message),
                Ok(Answer::Edited { input }) => Approval::Edited(input),
                Ok(other) => Approval::Deny(format!(
                    "the answer ({other:?}) does not answer an approval"
                )),
                Err(why) => Approval::Deny(format!("no answer came: {why}")),
            }
        })
    }
}
