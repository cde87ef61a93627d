//! Kaizen's sessions on Restate.
//!
//! A session is a Restate virtual object; a handler of it runs the loop
//! with [`RestateSteps`] as its step executor, and serves the steps the
//! loop hands over with [`serve_steps`]. Each step becomes a named
//! `ctx.run` in the invocation's journal. When the worker running the
//! invocation is lost, Restate runs it again on another: the loop starts
//! over from nothing, every finished step comes back from the journal
//! without running, and the step that was cut runs again.
//!
//! The loop's steps borrow what they work on, and `ctx.run` wants a
//! closure as long-lived as its context, so the closure holds only
//! channels: when Restate runs it, it tells the executor to run the step
//! and waits for its result; on a replay Restate answers from the journal
//! and the step is never started.

#![warn(missing_docs)]

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use kaizen_llm::{CompletionsFuture, LlmError, LlmErrorKind, Response};
use kaizen_runtime::{StepExecutor, StepKey, ToolStep};
use kaizen_tools::{ToolError, ToolErrorKind};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A step handed to the handler: its name in the journal, and the
/// channels between the executor and the `ctx.run` that journals it.
#[derive(Debug)]
pub struct StepRequest {
    name: String,
    /// Restate asks for the step to run (on a replay, never).
    start: oneshot::Sender<()>,
    /// The step's result, once it ran.
    value: oneshot::Receiver<Value>,
    /// What the journal holds for the step: the result above, or the one
    /// an earlier run of the invocation recorded.
    journaled: oneshot::Sender<Result<Value, String>>,
}

/// The step executor of a loop that runs inside a Restate handler: each
/// step goes to [`serve_steps`], which journals it.
#[derive(Debug, Clone)]
pub struct RestateSteps {
    requests: mpsc::UnboundedSender<StepRequest>,
}

impl RestateSteps {
    /// An executor, and the requests [`serve_steps`] takes.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<StepRequest>) {
        let (requests, taken) = mpsc::unbounded_channel();
        (Self { requests }, taken)
    }

    /// Runs `run` as the journaled step `key`: its value, or the one the
    /// journal holds.
    async fn step<T, F>(&self, key: StepKey, run: F) -> Result<T, String>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        let (start, started) = oneshot::channel();
        let (value_tx, value) = oneshot::channel();
        let (journaled, journal) = oneshot::channel();
        let request = StepRequest {
            name: key.to_string(),
            start,
            value,
            journaled,
        };
        if self.requests.send(request).is_err() {
            return Err("the handler no longer serves steps".into());
        }
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
        let encoded = serde_json::to_value(&output).map_err(|err| err.to_string())?;
        let _ = value_tx.send(encoded);
        // The journal now holds it; what it hands back is the same value.
        match journal.await {
            Ok(Ok(_)) => Ok(output),
            Ok(Err(err)) => Err(err),
            Err(_) => Err("the handler stopped serving steps".into()),
        }
    }
}

fn decode<T: DeserializeOwned>(
    kept: Result<Result<Value, String>, oneshot::error::RecvError>,
) -> Result<T, String> {
    match kept {
        Ok(Ok(value)) => serde_json::from_value(value).map_err(|err| err.to_string()),
        Ok(Err(err)) => Err(err),
        Err(_) => Err("the handler stopped serving steps".into()),
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
            match self.step(key, run).await {
                Ok(answers) => answers
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
            match self.step(key, call).await {
                Ok(result) => result,
                Err(message) => Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!("the step's journal failed: {message}"),
                )),
            }
        })
    }
}

/// Journals the steps `requests` brings, each as a named `ctx.run`, in
/// the order they come (which a run of the loop repeats), until the
/// executor is dropped.
pub async fn serve_steps(
    ctx: &ObjectContext<'_>,
    mut requests: mpsc::UnboundedReceiver<StepRequest>,
) {
    let mut running = FuturesUnordered::new();
    loop {
        tokio::select! {
            request = requests.recv() => match request {
                Some(request) => running.push(journal(ctx, request)),
                None => break,
            },
            Some(()) = running.next(), if !running.is_empty() => {}
        }
    }
    while running.next().await.is_some() {}
}

/// One step through `ctx.run`.
async fn journal(ctx: &ObjectContext<'_>, request: StepRequest) {
    let StepRequest {
        name,
        start,
        value,
        journaled,
    } = request;
    let kept = ctx
        .run(move || async move {
            let _ = start.send(());
            match value.await {
                Ok(value) => Ok(Json(value)),
                Err(_) => Err(TerminalError::new("the step was dropped before it ended").into()),
            }
        })
        .name(name)
        .await;
    let _ = journaled.send(kept.map(Json::into_inner).map_err(|err| err.to_string()));
}
