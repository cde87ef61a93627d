//! The loop's steps journaled through Restate.
//!
//! A handler runs the loop with [`RestateSteps`] as its step executor and
//! serves the steps the loop hands over with [`serve_steps`]. When the
//! worker running the invocation is lost, Restate runs it again on
//! another: the loop starts over from nothing and every finished step
//! comes back from the journal without running. A tool call that was cut
//! off is not run again (it may have done part of its work): the model is
//! told so, as a resumed session tells it. A model call that was cut off
//! runs again.
//!
//! Restate's Rust SDK journals one thing at a time (a handler may not
//! await two journaled futures at once), while the loop runs read-only
//! tools side by side and a sub-agent's steps inside its parent's. So the
//! steps do not run inside `ctx.run`: they run in the loop, and the
//! journal is one sequence of [`Entry`]s under one name, each a short
//! `ctx.run` that says what happened next: a tool step began, a step
//! ended with its value, a question is about to wait on an awakeable. A
//! run of the invocation again reads the sequence back in its order and
//! hands each entry to the step it names, whatever order the loop asks
//! in; once past its end, entries are made as things happen.

use kaizen_llm::{CompletionsFuture, LlmError, LlmErrorKind, Response};
use kaizen_runtime::{CancellationToken, StepExecutor, StepKey, ToolStep};
use kaizen_tools::{ToolError, ToolErrorKind};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc, oneshot};

/// What the loop hands the handler.
#[derive(Debug)]
pub enum StepRequest {
    /// A step to journal: see [`RestateSteps::step`].
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
        let value = serde_json::to_value(&output).map_err(|err| err.to_string())?;
        if self
            .requests
            .send(StepRequest::Value { key, value })
            .is_err()
        {
            return Err(GONE.into());
        }
        // The journal now holds it; what it hands back is the same value.
        match journal.await {
            Ok(Ok(_)) => Ok(Some(output)),
            Ok(Err(err)) => Err(err),
            Err(_) => Err(GONE.into()),
        }
    }

    /// Starts a durable wait, named `key`, for an answer from outside the
    /// turn: the journal keeps the wait, so a run of the turn after its
    /// worker was lost waits on the same id, and gets an answer given
    /// meanwhile.
    pub async fn wait(&self, key: &str) -> Result<Waiting, String> {
        let (id, made) = oneshot::channel();
        let (answer, answered) = oneshot::channel();
        let request = StepRequest::Wait {
            key: key.to_string(),
            id,
            answer,
        };
        self.requests.send(request).map_err(|_| GONE.to_string())?;
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

/// One entry of a turn's step journal.
#[derive(Debug, Serialize, Deserialize)]
enum Entry {
    /// The tool step began: a run of the turn again does not begin it
    /// again.
    Began(String),
    /// The step ended with this value ([`CUT`] when it was cut off).
    Ended(String, Value),
    /// The step waits on the awakeable the handler makes next.
    Waits(String),
}

/// The name of every entry: a run again reads them back in order,
/// whatever the loop asks for first.
const ENTRY: &str = "kaizen/step";

/// The code of the error Restate answers a cancelled invocation's steps
/// with.
const CANCELLED: u16 = 409;

/// Journals the steps `requests` brings until the executor is dropped
/// and every step it asked for is answered. When the invocation is
/// cancelled through the engine, `cancelled` is cancelled (the loop's
/// interrupt): the loop then ends as interrupted, at the step it is in.
pub async fn serve_steps(
    ctx: &ObjectContext<'_>,
    requests: mpsc::UnboundedReceiver<StepRequest>,
    cancelled: &CancellationToken,
) {
    let book = Arc::new(Mutex::new(Book::new(requests)));
    loop {
        // Journal only while a step waits on the journal: on a replay,
        // the entries are read back as the loop comes to them.
        if !book.lock().await.take_until_asked().await {
            return;
        }
        let live = book.clone();
        let entry = ctx
            .run(move || async move { Ok(Json(live.lock().await.next_entry().await)) })
            .name(ENTRY)
            .await;
        let entry = match entry {
            Ok(entry) => entry.into_inner(),
            Err(err) => {
                if err.code() == CANCELLED {
                    cancelled.cancel();
                }
                book.lock().await.fail_all(&err.to_string());
                continue;
            }
        };
        let mut known = book.lock().await;
        match entry {
            Entry::Began(key) => known.began(&key),
            Entry::Ended(key, value) => known.ended(key, value),
            Entry::Waits(key) => {
                let (id, promise) = ctx.awakeable::<Json<Value>>();
                let Some(answer) = known.waiting(&key, id).await else {
                    return;
                };
                drop(known);
                wait(promise, answer, cancelled).await;
            }
        }
    }
}

/// Waits on an awakeable until it is resolved, the invocation is
/// cancelled, or the loop stops waiting.
async fn wait(
    promise: impl Future<Output = Result<Json<Value>, TerminalError>>,
    mut answer: oneshot::Sender<Result<Value, String>>,
    cancelled: &CancellationToken,
) {
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

/// A step the loop asked for and the journal has not answered.
struct Run {
    key: String,
    once: bool,
    start: Option<oneshot::Sender<()>>,
    journaled: oneshot::Sender<Result<Value, String>>,
    /// An earlier run of the turn began it (its `Began` entry was read
    /// back).
    began_before: bool,
}

/// A wait the loop asked for, not yet handed its awakeable.
struct Wait {
    key: String,
    id: oneshot::Sender<String>,
    answer: oneshot::Sender<Result<Value, String>>,
}

/// What the handler knows of the loop's steps between entries.
struct Book {
    requests: mpsc::UnboundedReceiver<StepRequest>,
    /// The executor was dropped: no more requests come.
    closed: bool,
    /// Steps asked for, in the order asked.
    runs: Vec<Run>,
    waits: Vec<Wait>,
    /// Values of steps that ran, not yet journaled.
    values: HashMap<String, Value>,
    /// Entries read back before the loop asked for their step.
    began_before: HashSet<String>,
    ended_before: HashMap<String, Value>,
    /// Past the journal's end: entries are being made, not read back.
    live: bool,
}

/// How often a wait for the next entry looks for steps the loop gave up
/// on (its time ran out).
const ABANDONED_CHECK: Duration = Duration::from_millis(500);

impl Book {
    fn new(requests: mpsc::UnboundedReceiver<StepRequest>) -> Self {
        Self {
            requests,
            closed: false,
            runs: Vec::new(),
            waits: Vec::new(),
            values: HashMap::new(),
            began_before: HashSet::new(),
            ended_before: HashMap::new(),
            live: false,
        }
    }

    fn take(&mut self, request: StepRequest) {
        match request {
            StepRequest::Run {
                key,
                once,
                start,
                journaled,
            } => {
                if let Some(value) = self.ended_before.remove(&key) {
                    let _ = journaled.send(Ok(value));
                    return;
                }
                let began_before = self.began_before.remove(&key);
                self.runs.push(Run {
                    key,
                    once,
                    start: Some(start),
                    journaled,
                    began_before,
                });
            }
            StepRequest::Value { key, value } => {
                self.values.insert(key, value);
            }
            StepRequest::Wait { key, id, answer } => self.waits.push(Wait { key, id, answer }),
        }
    }

    /// Takes requests until one waits on the journal; `false` when none
    /// ever will (the executor is gone and everything was answered).
    async fn take_until_asked(&mut self) -> bool {
        loop {
            while let Ok(request) = self.requests.try_recv() {
                self.take(request);
            }
            if !self.runs.is_empty() || !self.waits.is_empty() {
                return true;
            }
            if self.closed {
                return false;
            }
            match self.requests.recv().await {
                Some(request) => self.take(request),
                None => self.closed = true,
            }
        }
    }

    /// The next entry, past the journal's end: made as things happen.
    async fn next_entry(&mut self) -> Entry {
        self.live = true;
        loop {
            while let Ok(request) = self.requests.try_recv() {
                self.take(request);
            }
            // A step with no effect of its own runs at once.
            for run in self.runs.iter_mut().filter(|run| !run.once) {
                if let Some(start) = run.start.take() {
                    let _ = start.send(());
                }
            }
            if let Some(entry) = self.due() {
                return entry;
            }
            match tokio::time::timeout(ABANDONED_CHECK, self.requests.recv()).await {
                Ok(Some(request)) => self.take(request),
                Ok(None) => {
                    self.closed = true;
                    tokio::time::sleep(ABANDONED_CHECK).await;
                }
                Err(_) => {}
            }
        }
    }

    /// What to journal next, if anything is due: a cut step's end, a tool
    /// step's beginning or a wait (in the order asked), then an end.
    fn due(&mut self) -> Option<Entry> {
        let ended = |run: &Run| {
            if run.began_before || run.journaled.is_closed() {
                // Cut in an earlier run, or given up on by the loop.
                Some(Value::String(CUT.into()))
            } else {
                None
            }
        };
        if let Some(run) = self.runs.iter().find(|run| ended(run).is_some()) {
            return Some(Entry::Ended(run.key.clone(), ended(run)?));
        }
        if let Some(run) = self.runs.iter().find(|run| run.once && run.start.is_some()) {
            return Some(Entry::Began(run.key.clone()));
        }
        if let Some(wait) = self.waits.first() {
            return Some(Entry::Waits(wait.key.clone()));
        }
        let run = self
            .runs
            .iter()
            .find(|run| self.values.contains_key(&run.key))?;
        let value = self.values.remove(&run.key)?;
        Some(Entry::Ended(run.key.clone(), value))
    }

    /// The tool step `key` began: past the journal's end, it runs now;
    /// read back, it is not run again.
    fn began(&mut self, key: &str) {
        match self.runs.iter_mut().find(|run| run.key == key) {
            Some(run) if self.live => {
                if let Some(start) = run.start.take() {
                    let _ = start.send(());
                }
            }
            Some(run) => {
                run.start = None;
                run.began_before = true;
            }
            None => {
                self.began_before.insert(key.to_string());
            }
        }
    }

    /// Step `key` ended with `value`: its answer.
    fn ended(&mut self, key: String, value: Value) {
        match self.runs.iter().position(|run| run.key == key) {
            Some(at) => {
                let _ = self.runs.remove(at).journaled.send(Ok(value));
            }
            None => {
                self.ended_before.insert(key, value);
            }
        }
    }

    /// Hands the awakeable `id` to the wait `key` (waiting for the loop to
    /// ask for it, on a replay); the sender of its answer.
    async fn waiting(
        &mut self,
        key: &str,
        id: String,
    ) -> Option<oneshot::Sender<Result<Value, String>>> {
        loop {
            if let Some(at) = self.waits.iter().position(|wait| wait.key == key) {
                let wait = self.waits.remove(at);
                let _ = wait.id.send(id);
                return Some(wait.answer);
            }
            match self.requests.recv().await {
                Some(request) => self.take(request),
                // The loop ended without asking: nothing more to journal.
                None => return None,
            }
        }
    }

    /// The journal failed (the turn was cancelled): every step waiting on
    /// it gets the error.
    fn fail_all(&mut self, err: &str) {
        for run in self.runs.drain(..) {
            let _ = run.journaled.send(Err(err.to_string()));
        }
        for wait in self.waits.drain(..) {
            let _ = wait.answer.send(Err(err.to_string()));
        }
    }
}
