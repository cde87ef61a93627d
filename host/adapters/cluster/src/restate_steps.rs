//! The loop's steps journaled through Restate: the executor side.
//!
//! A handler runs the loop with [`RestateSteps`] as its step executor and
//! serves the steps the loop hands over with
//! [`serve_steps`](crate::restate_journal::serve_steps). When the worker running
//! the invocation is lost, Restate runs it again on another: the loop
//! starts over from nothing and every finished step comes back from the
//! journal without running. A tool call that was cut off is not run again
//! (it may have done part of its work): the model is told so, as a
//! resumed session tells it. A model call that was cut off runs again.
//! Steps run here, in the loop, not inside `ctx.run`: see
//! [`journal`](crate::restate_journal) for why.

use kaizen_llm::{CompletionsFuture, LlmError, LlmErrorKind, Response};
use kaizen_loop::{StepExecutor, ToolStep, ToolStepped};
use kaizen_protocol::StepKey;
use kaizen_tools::{ToolError, ToolErrorKind};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// What the loop hands the handler.
#[derive(Debug)]
pub enum StepRequest {
    /// A step to journal.
    Run {
        /// Its name.
        key: String,
        /// A step with effects of its own (a tool call): when an earlier
        /// run of the invocation began it and never journaled its end, it
        /// is reported as cut off rather than run again.
        once: bool,
        /// Told when the step is to run (on a replay, never).
        start: oneshot::Sender<()>,
        /// What the journal holds for the step.
        journaled: oneshot::Sender<Result<Value, String>>,
    },
    /// A step's value, once it ran.
    Value {
        /// The step.
        key: String,
        /// What it returned.
        value: Value,
    },
    /// A wait for an answer from outside: see [`RestateSteps::wait`].
    Wait {
        /// Its name.
        key: String,
        /// The awakeable's id.
        id: oneshot::Sender<String>,
        /// Its answer, or why there is none.
        answer: oneshot::Sender<Result<Value, String>>,
    },
}

/// An answer being waited for, under the id that resolves it.
#[derive(Debug)]
pub struct Waiting {
    /// The awakeable's id: resolving it through the engine answers.
    pub id: String,
    answer: oneshot::Receiver<Result<Value, String>>,
}

impl Waiting {
    /// The answer, once someone gives it (on a replay, at once).
    /// Dropping this stops the wait.
    pub async fn answer(self) -> Result<Value, String> {
        match self.answer.await {
            Ok(answer) => answer,
            Err(_) => gone().await,
        }
    }
}

/// The step executor of a loop that runs inside a Restate handler: each
/// step goes to [`serve_steps`](crate::restate_journal::serve_steps), which
/// journals it.
#[derive(Debug, Clone)]
pub struct RestateSteps {
    requests: mpsc::UnboundedSender<StepRequest>,
}

impl RestateSteps {
    /// An executor, and the requests
    /// [`serve_steps`](crate::restate_journal::serve_steps) takes.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<StepRequest>) {
        let (requests, taken) = mpsc::unbounded_channel();
        (Self { requests }, taken)
    }

    /// Runs `run` as the journaled step `key` (see [`StepRequest::Run`]
    /// for `once`): its value, the one the journal holds, or `None` when
    /// the step was cut off in an earlier run.
    async fn step<T, F>(&self, key: StepKey, once: bool, run: F) -> Result<Option<T>, String>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        let key = key.to_string();
        let (start, started) = oneshot::channel();
        let (journaled, journal) = oneshot::channel();
        let request = StepRequest::Run {
            key: key.clone(),
            once,
            start,
            journaled,
        };
        if self.requests.send(request).is_err() {
            return gone().await;
        }
        let journal = async move {
            match journal.await {
                Ok(kept) => kept,
                Err(_) => gone().await,
            }
        };
        tokio::pin!(journal);
        tokio::select! {
            biased;
            // A replay: the journal answers without the step running.
            kept = &mut journal => return decode(kept),
            asked = started => {
                if asked.is_err() {
                    return decode(journal.await);
                }
            }
        }
        let output = run.await;
        let value = serde_json::to_value(&output).map_err(|err| err.to_string())?;
        if self
            .requests
            .send(StepRequest::Value { key, value })
            .is_err()
        {
            return gone().await;
        }
        // The journal now holds it; what it hands back is the same value.
        journal.await.map(|_| Some(output))
    }

    /// Starts a durable wait, named `key`, for an answer from outside the
    /// turn: the journal keeps the wait, so a run of the turn after its
    /// worker was lost waits on the same id, and gets an answer given
    /// meanwhile.
    pub async fn wait(&self, key: &str) -> Waiting {
        let (id, made) = oneshot::channel();
        let (answer, answered) = oneshot::channel();
        let request = StepRequest::Wait {
            key: key.to_string(),
            id,
            answer,
        };
        if self.requests.send(request).is_err() {
            return gone().await;
        }
        let Ok(id) = made.await else {
            return gone().await;
        };
        Waiting {
            id,
            answer: answered,
        }
    }
}

/// The handler that journals steps is gone: the engine let go of the
/// turn (it suspended it, or lost the connection), and the worker stops
/// this run of it (see `TurnRunner::run`'s `abandoned`). Until then,
/// nothing answers: the loop writes nothing a later run would not.
async fn gone<T>() -> T {
    std::future::pending().await
}

/// What the journal holds for a step whose end an earlier run never
/// journaled.
pub(crate) const CUT: &str = "kaizen:cut-off";

/// What the journal holds for a step, as the step's value: `None` when
/// it was cut off.
fn decode<T: DeserializeOwned>(kept: Result<Value, String>) -> Result<Option<T>, String> {
    match kept {
        Ok(Value::String(marker)) if marker == CUT => Ok(None),
        Ok(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|err| err.to_string()),
        Err(err) => Err(err),
    }
}

/// A model call's outcome as the journal keeps it.
#[derive(Debug, Serialize, Deserialize)]
enum Answer {
    Ok(Response),
    Err { kind: LlmErrorKind, message: String },
}

impl StepExecutor for RestateSteps {
    fn model<'a>(&'a self, key: StepKey, call: CompletionsFuture<'a>) -> CompletionsFuture<'a> {
        Box::pin(async move {
            let run = async move {
                call.await
                    .into_iter()
                    .map(|answer| match answer {
                        Ok(response) => Answer::Ok(response),
                        Err(err) => Answer::Err {
                            kind: err.kind,
                            message: err.message,
                        },
                    })
                    .collect::<Vec<_>>()
            };
            // A model call has no effect but its cost: one cut off runs
            // again.
            match self.step(key, false, run).await {
                Ok(None) => vec![Err(LlmError {
                    kind: LlmErrorKind::InvalidResponse,
                    message: "the model call's journal entry was lost".into(),
                })],
                Ok(Some(answers)) => answers
                    .into_iter()
                    .map(|answer| match answer {
                        Answer::Ok(response) => Ok(response),
                        Answer::Err { kind, message } => Err(LlmError { kind, message }),
                    })
                    .collect(),
                Err(message) => vec![Err(LlmError {
                    kind: LlmErrorKind::InvalidResponse,
                    message: format!("the step's journal failed: {message}"),
                })],
            }
        })
    }

    fn tool<'a>(&'a self, key: StepKey, call: ToolStep<'a>) -> ToolStep<'a> {
        Box::pin(async move {
            let name = key.id.clone();
            match self.step(key, true, call).await {
                Ok(Some(stepped)) => stepped,
                Ok(None) => ToolStepped::from(Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!(
                        "This call ({name}) was cut off when the worker running the session was \
                         lost, before its result came back. It may have done part or all of its \
                         work, or none; background processes it started are gone. Check the \
                         current state before relying on it, and call it again if it is still \
                         needed."
                    ),
                ))),
                Err(message) => ToolStepped::from(Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!("the step's journal failed: {message}"),
                ))),
            }
        })
    }
}
