//! Writing a session's checkpoints on a thread of their own, so that the
//! loop pays only for a copy of the state, not for serializing,
//! compressing and fsyncing it. When checkpoints come faster than the disk
//! takes them, only the newest waiting one is written: each supersedes the
//! ones before it.

use crate::state::SessionState;
use kaizen_protocol::Status;
use kaizen_session_store::SessionStore;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

enum Job {
    Write { seq: u64, state: Box<SessionState> },
    Flush(Sender<()>),
}

/// The writing thread of one session.
pub(crate) struct CheckpointWriter {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    problems: Arc<Mutex<Vec<String>>>,
}

impl CheckpointWriter {
    /// Starts writing session `id`'s checkpoints into `store`.
    pub fn start(store: SessionStore, id: String) -> Self {
        let (jobs, queue) = mpsc::channel();
        let problems = Arc::new(Mutex::new(Vec::new()));
        let reported = problems.clone();
        let thread = std::thread::Builder::new()
            .name(format!("checkpoints {id}"))
            .spawn(move || serve(&store, &id, &queue, &reported))
            .ok();
        Self {
            jobs: thread.is_some().then_some(jobs),
            thread,
            problems,
        }
    }

    /// Queues `state`, which includes the log up to entry `seq`.
    pub fn write(&self, seq: u64, state: SessionState) {
        let job = Job::Write {
            seq,
            state: Box::new(state),
        };
        if self
            .jobs
            .as_ref()
            .is_none_or(|jobs| jobs.send(job).is_err())
        {
            self.report("the checkpoint thread is not running; no checkpoint was written".into());
        }
    }

    /// Waits until everything queued is written.
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if let Some(jobs) = &self.jobs
            && jobs.send(Job::Flush(done)).is_ok()
        {
            let _ = wait.recv();
        }
    }

    /// What could not be written.
    pub fn problems(&self) -> Vec<String> {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn report(&self, problem: String) {
        report(&self.problems, problem);
    }
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has written the rest.
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn report(problems: &Mutex<Vec<String>>, problem: String) {
    let mut problems = problems.lock().unwrap_or_else(|e| e.into_inner());
    if !problems.contains(&problem) {
        tracing::warn!("{problem}");
        problems.push(problem);
    }
}

fn serve(store: &SessionStore, id: &str, queue: &Receiver<Job>, problems: &Mutex<Vec<String>>) {
    while let Ok(first) = queue.recv() {
        // Everything queued by now: the newest state, and who waits.
        let mut newest = None;
        let mut waiting = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next {
            match job {
                Job::Write { seq, state } => newest = Some((seq, state)),
                Job::Flush(done) => waiting.push(done),
            }
            next = queue.try_recv().ok();
        }
        if let Some((seq, state)) = newest
            && let Err(err) = write(store, id, seq, &state)
        {
            report(problems, format!("session {id}: {err}"));
        }
        for done in waiting {
            let _ = done.send(());
        }
    }
}

fn write(
    store: &SessionStore,
    id: &str,
    seq: u64,
    state: &SessionState,
) -> kaizen_session_store::Result<()> {
    store.write_checkpoint(id, seq, state)?;
    let status = state.status.map_or("running", Status::as_str);
    store.update_meta(id, |meta| {
        meta.status = status.to_string();
        meta.cycles = state.cycles;
        meta.cost_usd = state.cost_usd;
        meta.model.clone_from(&state.model);
    })
}
