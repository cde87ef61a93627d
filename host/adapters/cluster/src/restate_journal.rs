//! The handler side of the loop's steps: one journaled sequence of
//! short entries.
//!
//! Restate's Rust SDK journals one thing at a time (a handler may not
//! await two journaled futures at once), while the loop runs read-only
//! tools side by side and a sub-agent's steps inside its parent's. So the
//! steps do not run inside `ctx.run`: they run in the loop, and the
//! journal is one sequence of entries under one name, each a short
//! `ctx.run` that says what happened next: a tool step began, a step
//! ended with its value, a question is about to wait on an awakeable. A
//! run of the invocation again reads the sequence back in its order and
//! hands each entry to the step it names, whatever order the loop asks
//! in; once past its end, entries are made as things happen.

use crate::restate_steps::{CUT, StepRequest};
use kaizen_protocol::CancellationToken;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc, oneshot};

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

    /// Takes every request that has come.
    fn take_arrived(&mut self) {
        while let Ok(request) = self.requests.try_recv() {
            self.take(request);
        }
    }

    /// Takes requests until one waits on the journal; `false` when none
    /// ever will (the executor is gone and everything was answered).
    async fn take_until_asked(&mut self) -> bool {
        loop {
            self.take_arrived();
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
            self.take_arrived();
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
        // Cut in an earlier run, or given up on by the loop.
        let cut = |run: &&Run| run.began_before || run.journaled.is_closed();
        if let Some(run) = self.runs.iter().find(cut) {
            return Some(Entry::Ended(run.key.clone(), Value::String(CUT.into())));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool step's request, and the ends the loop holds.
    fn run(
        key: &str,
        once: bool,
    ) -> (
        StepRequest,
        oneshot::Receiver<()>,
        oneshot::Receiver<Result<Value, String>>,
    ) {
        let (start, started) = oneshot::channel();
        let (journaled, journal) = oneshot::channel();
        let request = StepRequest::Run {
            key: key.into(),
            once,
            start,
            journaled,
        };
        (request, started, journal)
    }

    #[tokio::test]
    async fn entries_read_back_reach_their_steps_whatever_order_the_loop_asks_in() {
        let (_requests, taken) = mpsc::unbounded_channel();
        let mut book = Book::new(taken);
        let (x, mut x_started, mut x_journal) = run("x", true);
        let (y, _y_started, mut y_journal) = run("y", true);
        // The journal holds y's end before x's: x was the slower.
        book.take(x);
        book.began("x");
        book.began("y");
        book.take(y);
        book.ended("y".into(), json_value("y done"));
        assert_eq!(y_journal.try_recv().unwrap(), Ok(json_value("y done")));
        book.ended("x".into(), json_value("x done"));
        assert_eq!(x_journal.try_recv().unwrap(), Ok(json_value("x done")));
        // Read back, neither was started again.
        assert!(x_started.try_recv().is_err());
        assert!(book.runs.is_empty());
    }

    #[tokio::test]
    async fn past_the_end_a_step_begun_before_is_cut_and_a_new_one_begins() {
        let (requests, taken) = mpsc::unbounded_channel();
        let mut book = Book::new(taken);
        let (cut, mut cut_started, _cut_journal) = run("cut", true);
        book.take(cut);
        book.began("cut");
        // The journal ends here: entries are made from now on.
        let (fresh, mut fresh_started, _fresh_journal) = run("fresh", true);
        let (model, mut model_started, _model_journal) = run("model", false);
        requests.send(fresh).unwrap();
        requests.send(model).unwrap();
        assert!(matches!(
            book.next_entry().await,
            Entry::Ended(key, Value::String(marker)) if key == "cut" && marker == CUT
        ));
        assert!(cut_started.try_recv().is_err(), "a cut step ran again");
        // A model call needs no entry to start; a tool step's beginning
        // is journaled first.
        assert!(model_started.try_recv().is_ok());
        book.ended("cut".into(), Value::String(CUT.into()));
        assert!(matches!(book.next_entry().await, Entry::Began(key) if key == "fresh"));
        assert!(fresh_started.try_recv().is_err());
        book.began("fresh");
        assert!(fresh_started.try_recv().is_ok());
        requests
            .send(StepRequest::Value {
                key: "fresh".into(),
                value: json_value("ran"),
            })
            .unwrap();
        assert!(matches!(
            book.next_entry().await,
            Entry::Ended(key, value) if key == "fresh" && value == json_value("ran")
        ));
    }

    #[tokio::test]
    async fn a_step_the_loop_gave_up_on_is_journaled_as_cut() {
        let (_requests, taken) = mpsc::unbounded_channel();
        let mut book = Book::new(taken);
        let (step, _started, journal) = run("slow", false);
        book.take(step);
        drop(journal);
        assert!(matches!(
            book.next_entry().await,
            Entry::Ended(key, Value::String(marker)) if key == "slow" && marker == CUT
        ));
    }

    fn json_value(text: &str) -> Value {
        Value::String(text.into())
    }
}
