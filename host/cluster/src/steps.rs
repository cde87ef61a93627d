//! The loop's steps journaled through Restate.
//!
//! A handler runs the loop with [`RestateSteps`] as its step executor and
//! serves the steps the loop hands over with [`serve_steps`]. Each step
//! becomes a named `ctx.run` in the invocation's journal. When the worker
//! running the invocation is lost, Restate runs it again on another: the
//! loop starts over from nothing and every finished step comes back from
//! the journal without running. A tool call that was cut off is not run
//! again (it may have done part of its work): the model is told so, as a
//! resumed session tells it. A model call that was cut off runs again.
//!
//! The loop's steps borrow what they work on, and `ctx.run` wants a
//! closure as long-lived as its context, so the closure holds only
//! channels: when Restate runs it, it tells the executor to run the step
//! and waits for its result; on a replay Restate answers from the journal
//! and the step is never started.

use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use kaizen_llm::{CompletionsFuture, LlmError, LlmErrorKind, Response};
use kaizen_runtime::{CancellationToken, StepExecutor, StepKey, ToolStep};
use kaizen_tools::{ToolError, ToolErrorKind};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{mpsc, oneshot};

/// What the loop hands the handler: a step to journal, or a wait for a
/// person's answer.
#[derive(Debug)]
pub enum StepRequest {
    /// A step through `ctx.run`.
    Run(RunRequest),
    /// A wait on an awakeable.
    Wait(WaitRequest),
}

/// A step handed to the handler: its name in the journal, and the
/// channels between the executor and the `ctx.run` that journals it.
#[derive(Debug)]
pub struct RunRequest {
    name: String,
    /// A step with effects of its own (a tool call): when an earlier run
    /// of the invocation started it and never journaled its end, it is
    /// reported as cut off rather than run again.
    once: bool,
    /// Restate asks for the step to run (on a replay, never).
    start: oneshot::Sender<()>,
    /// The step's result, once it ran.
    value: oneshot::Receiver<Value>,
    /// What the journal holds for the step: the result above, or the one
    /// an earlier run of the invocation recorded.
    journaled: oneshot::Sender<Result<Value, String>>,
}

/// A wait for an answer from outside (a person's), durably: the handler
/// makes an awakeable, hands its id back, and sends on what resolves it.
#[derive(Debug)]
pub struct WaitRequest {
    /// The awakeable's id, for whoever is to answer.
    id: oneshot::Sender<String>,
    /// Its answer, or why there is none (the turn was cancelled).
    answer: oneshot::Sender<Result<Value, String>>,
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
        self.answer.await.unwrap_or_else(|_| Err(GONE.into()))
    }
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

    /// Runs `run` as the journaled step `key` (see [`StepRequest`] for
    /// `once`): its value, the one the journal holds, or `None` when the
    /// step was cut off in an earlier run.
    async fn step<T, F>(&self, key: StepKey, once: bool, run: F) -> Result<Option<T>, String>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        let (start, started) = oneshot::channel();
        let (value_tx, value) = oneshot::channel();
        let (journaled, journal) = oneshot::channel();
        let request = StepRequest::Run(RunRequest {
            name: key.to_string(),
            once,
            start,
            value,
            journaled,
        });
        if self.requests.send(request).is_err() {
            return Err(GONE.into());
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
            Ok(Ok(_)) => Ok(Some(output)),
            Ok(Err(err)) => Err(err),
            Err(_) => Err(GONE.into()),
        }
    }

    /// Starts a durable wait for an answer from outside the turn: the
    /// journal keeps the wait, so a run of the turn after its worker was
    /// lost waits on the same id, and gets an answer given meanwhile.
    pub async fn wait(&self) -> Result<Waiting, String> {
        let (id, made) = oneshot::channel();
        let (answer, answered) = oneshot::channel();
        self.requests
            .send(StepRequest::Wait(WaitRequest { id, answer }))
            .map_err(|_| GONE.to_string())?;
        let id = made.await.map_err(|_| GONE.to_string())?;
        Ok(Waiting {
            id,
            answer: answered,
        })
    }
}

/// Why a step has no answer: the handler that journals steps is gone.
const GONE: &str = "the handler no longer serves steps";

/// What the journal holds for a step whose end an earlier run never
/// journaled.
const CUT: &str = "kaizen:cut-off";

fn decode<T: DeserializeOwned>(
    kept: Result<Result<Value, String>, oneshot::error::RecvError>,
) -> Result<Option<T>, String> {
    match kept {
        Ok(Ok(Value::String(marker))) if marker == CUT => Ok(None),
        Ok(Ok(value)) => serde_json::from_value(value)
            .map(Some)
            .map_err(|err| err.to_string()),
        Ok(Err(err)) => Err(err),
        Err(_) => Err(GONE.into()),
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
                Ok(Some(result)) => result,
                Ok(None) => Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!(
                        "This call ({name}) was cut off when the worker running the session was \
                         lost, before its result came back. It may have done part or all of its \
                         work, or none; background processes it started are gone. Check the \
                         current state before relying on it, and call it again if it is still \
                         needed."
                    ),
                )),
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
/// executor is dropped. When the invocation is cancelled through the
/// engine, `cancelled` is cancelled (the loop's interrupt): the loop then
/// ends as interrupted, at the step it is in.
pub async fn serve_steps(
    ctx: &ObjectContext<'_>,
    mut requests: mpsc::UnboundedReceiver<StepRequest>,
    cancelled: &CancellationToken,
) {
    let mut running = FuturesUnordered::new();
    loop {
        tokio::select! {
            request = requests.recv() => match request {
                Some(StepRequest::Run(request)) => running.push(journal(ctx, request, cancelled).boxed()),
                Some(StepRequest::Wait(request)) => running.push(wait(ctx, request, cancelled).boxed()),
                None => break,
            },
            Some(()) = running.next(), if !running.is_empty() => {}
        }
    }
    while running.next().await.is_some() {}
}

/// The code of the error Restate answers a cancelled invocation's steps
/// with.
const CANCELLED: u16 = 409;

/// One wait on an awakeable, until it is resolved, the invocation is
/// cancelled, or the loop stops waiting.
async fn wait(ctx: &ObjectContext<'_>, request: WaitRequest, cancelled: &CancellationToken) {
    let WaitRequest { id, mut answer } = request;
    let (made, promise) = ctx.awakeable::<Json<Value>>();
    if id.send(made).is_err() {
        return;
    }
    tokio::select! {
        answered = promise => {
            if answered.as_ref().is_err_and(|err| err.code() == CANCELLED) {
                cancelled.cancel();
            }
            let _ = answer.send(answered.map(Json::into_inner).map_err(|err| err.to_string()));
        }
        // The loop no longer waits (its time ran out): neither does this.
        () = answer.closed() => {}
    }
}

/// One step through `ctx.run`.
async fn journal(ctx: &ObjectContext<'_>, request: RunRequest, cancelled: &CancellationToken) {
    let RunRequest {
        name,
        once,
        start,
        value,
        journaled,
    } = request;
    // For a step run once: an entry saying it started, whose closure runs
    // only when no earlier run journaled it.
    let fresh = Arc::new(AtomicBool::new(!once));
    if once {
        let first = fresh.clone();
        let started = ctx
            .run(move || async move {
                first.store(true, Ordering::SeqCst);
                Ok(())
            })
            .name(format!("{name}/start"))
            .await;
        if let Err(err) = started {
            if err.code() == CANCELLED {
                cancelled.cancel();
            }
            let _ = journaled.send(Err(err.to_string()));
            return;
        }
    }
    let kept = ctx
        .run(move || async move {
            // Started before, never ended: it is not started again.
            if !fresh.load(Ordering::SeqCst) {
                return Ok(Json(Value::String(CUT.into())));
            }
            let _ = start.send(());
            match value.await {
                Ok(value) => Ok(Json(value)),
                Err(_) => Err(TerminalError::new("the step was dropped before it ended").into()),
            }
        })
        .name(name)
        .await;
    if kept.as_ref().is_err_and(|err| err.code() == CANCELLED) {
        cancelled.cancel();
    }
    let _ = journaled.send(kept.map(Json::into_inner).map_err(|err| err.to_string()));
}
