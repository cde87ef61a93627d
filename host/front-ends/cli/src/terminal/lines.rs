//! Reading the terminal's lines on a thread of its own: by default one
//! line per request (a prompt's answer); once a run queues messages
//! ([`LineReader::read_continuously`]), every line, each going to the open
//! prompt if there is one and else to the run.

use std::io::{self, BufRead};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;

/// Where a line read from the terminal is sent: `None` at end of input.
type LineReply = oneshot::Sender<io::Result<Option<String>>>;

/// Reads stdin lines on a thread of its own, one per request.
///
/// Not `spawn_blocking`: an ask can be dropped mid-read (an interrupt, the
/// run's timeout), and a blocking task still stuck in `read_line` would
/// make the runtime's shutdown wait for the user to press Enter. A plain
/// thread does not hold the process up at exit.
#[derive(Default)]
pub(super) struct LineReader {
    /// Started on the first question (most runs never ask one), or when
    /// the run starts queueing typed lines.
    requests: Mutex<Option<mpsc::Sender<LineReply>>>,
    /// A prompt is open: a line typed now is its answer.
    prompting: Arc<AtomicBool>,
}

/// Where lines typed while no prompt is open go.
pub(super) type Sink = Box<dyn Fn(String) + Send>;

impl LineReader {
    /// Marks a prompt open or closed.
    pub(super) fn set_prompting(&self, open: bool) {
        self.prompting.store(open, Ordering::SeqCst);
    }

    /// Reads every line from now on: the open prompt's answers, and the
    /// rest to `sink`. Only before the first request.
    pub(super) fn read_continuously(&self, sink: Sink) {
        let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        if requests.is_some() {
            return;
        }
        let prompting = self.prompting.clone();
        let serve = move |receiver: mpsc::Receiver<LineReply>| {
            serve_continuously(&receiver, &prompting, &sink)
        };
        if let Err(err) = start(&mut requests, serve) {
            tracing::warn!("cannot read the terminal while the run works: {err}");
        }
    }

    /// The next line typed, or `None` at end of input (Ctrl-D).
    pub(super) async fn read_line(&self) -> io::Result<Option<String>> {
        let (reply, line) = oneshot::channel();
        self.request(reply)?;
        line.await
            .unwrap_or_else(|_| Err(io::Error::other("the terminal reader stopped")))
    }

    fn request(&self, reply: LineReply) -> io::Result<()> {
        let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        if requests.is_none() {
            start(&mut requests, |receiver| serve(&receiver))?;
        }
        let sender = requests.as_ref().expect("started above");
        sender
            .send(reply)
            .map_err(|_| io::Error::other("the terminal reader stopped"))
    }
}

/// Starts the reader thread, `serve` reading the requests `slot` now
/// sends to.
fn start(
    slot: &mut Option<mpsc::Sender<LineReply>>,
    serve: impl FnOnce(mpsc::Receiver<LineReply>) + Send + 'static,
) -> io::Result<()> {
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name("kaizen-terminal".into())
        .spawn(move || serve(receiver))?;
    *slot = Some(sender);
    Ok(())
}

/// The reader thread: one line per request, in order.
fn serve(requests: &mpsc::Receiver<LineReply>) {
    let stdin = io::stdin();
    while let Ok(mut reply) = requests.recv() {
        if reply.is_closed() {
            // Its ask was dropped before anything was typed for it.
            continue;
        }
        let mut line = String::new();
        let mut result = match stdin.lock().read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(line)),
            Err(err) => Err(err),
        };
        // If the asker gave up while the user typed, the line belongs to
        // the prompt that replaced it, when there is one: that is what the
        // user was looking at.
        while let Err(unsent) = reply.send(result) {
            match requests.try_recv() {
                Ok(next) => (reply, result) = (next, unsent),
                Err(_) => break,
            }
        }
    }
}

/// The reader thread once a run queues typed lines: each line goes to the
/// request waiting for it, or, while a prompt is open, to the one it is
/// about to make; else to `sink`. At the end of input every request gets
/// `None`.
fn serve_continuously(requests: &mpsc::Receiver<LineReply>, prompting: &AtomicBool, sink: &Sink) {
    let stdin = io::stdin();
    loop {
        let mut line = String::new();
        let result = match stdin.lock().read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(line)),
            Err(err) => Err(err),
        };
        let Some(unasked) = answer(requests, prompting, result) else {
            return;
        };
        match unasked {
            Ok(Some(line)) => sink(line),
            Ok(None) => {}
            // The end of input: every later prompt is declined.
            Err(()) => {
                while let Ok(reply) = requests.recv() {
                    let _ = reply.send(Ok(None));
                }
                return;
            }
        }
    }
}

/// Gives `result` to the request waiting for it, or, while a prompt is
/// open, to the one it is about to make. What no request took: `Ok(Some)`
/// a line for the run, `Ok(None)` nothing, `Err` the end of input; `None`
/// when the terminal's users are gone.
fn answer(
    requests: &mpsc::Receiver<LineReply>,
    prompting: &AtomicBool,
    mut result: io::Result<Option<String>>,
) -> Option<Result<Option<String>, ()>> {
    loop {
        let reply = match requests.try_recv() {
            Ok(reply) => reply,
            Err(mpsc::TryRecvError::Empty) if prompting.load(Ordering::SeqCst) => {
                match requests.recv_timeout(Duration::from_millis(50)) {
                    Ok(reply) => reply,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                }
            }
            Err(mpsc::TryRecvError::Empty) => {
                return Some(match result {
                    Ok(Some(line)) => Ok(Some(line)),
                    Ok(None) | Err(_) => Err(()),
                });
            }
            Err(mpsc::TryRecvError::Disconnected) => return None,
        };
        let end = !matches!(result, Ok(Some(_)));
        match reply.send(result) {
            Ok(()) if end => return Some(Err(())),
            Ok(()) => return Some(Ok(None)),
            // Its ask was dropped: the next one may take it.
            Err(unsent) => result = unsent,
        }
    }
}
