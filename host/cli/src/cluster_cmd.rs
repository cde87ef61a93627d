//! `kaizen run --cluster URL`: a session's turn sent to a Restate cluster
//! of Kaizen workers, its events and result printed as a local run
//! prints them.
//!
//! The events come from the session's stream in the shared session store
//! (the workers write it); the result comes from the engine. Ctrl-C asks
//! the engine to cancel the turn, which ends it as interrupted at its
//! next step.
//!
//! A question the turn waits on (a tool call to approve, a plugin's
//! choices) is asked here when this is a terminal, and otherwise left for
//! `kaizen approve SESSION`; either answer goes through the engine, and a
//! prompt here is withdrawn when the other answers first.

use crate::cluster_asks::{self, TerminalAnswers};
use crate::output::Printer;
use crate::run_options::RunOptions;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use kaizen_app::session::{self, Choice};
use kaizen_app::session_builder::{SetupError, usage};
use kaizen_cluster::stream::stream_path;
use kaizen_cluster::{Answer, Cluster, Item, Question, StreamReader, TurnRequest};
use kaizen_protocol::{CancellationToken, Event, Observer};
use kaizen_runtime::new_session_id;
use kaizen_session_store::SessionStore;
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

/// How often the session's stream is read for new events.
const POLL: Duration = Duration::from_millis(100);

/// Sends the task as a turn of a new session (or of the `--resume`d one)
/// to the cluster whose ingress is `ingress`; returns the exit code.
pub async fn run(
    mut options: RunOptions,
    ingress: &str,
    admin: Option<&str>,
) -> Result<u8, SetupError> {
    options.check_limits()?;
    let fork = matches!(options.session, Choice::Fork { .. }).then_some("--fork");
    if let Some(flag) = options.local_only(fork) {
        return Err(usage(anyhow::anyhow!(
            "{flag} works only on this machine, not with --cluster"
        )));
    }
    let store = session::open_store()?;
    let (session, request) = turn_request(&mut options, &store, ingress)?;
    let turn = request.turn.clone();
    let admin = admin.map_or_else(|| Cluster::default_admin(ingress), str::to_string);
    let cluster = Cluster::new(ingress, &admin);
    let path = stream_path(&store, &session);
    let mut reader = StreamReader::new(&path, &turn, StreamReader::end_of(&path));
    let submitted = cluster
        .submit(&session, &request)
        .await
        .map_err(anyhow::Error::msg)?;
    let printer = Arc::new(Printer::new(options.format));
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(crate::signals::watch(interrupt.clone()));
    let at_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut questions = Questions::new(
        &session,
        at_terminal.then(|| TerminalAnswers::new(printer.clone(), interrupt.clone())),
    );
    let shown = |reader: &mut StreamReader, questions: &mut Questions<'_>| {
        for item in reader.read_new() {
            match item {
                // The result is the engine's, printed once at the end.
                Item::Event(Event::Result(_)) => {}
                Item::Event(event) => printer.on_event(&event),
                Item::Asked { id, question } => questions.asked(id, question),
                Item::Answered(id) => questions.answered(&id),
            }
        }
    };
    let result = cluster.result(&submitted);
    tokio::pin!(result);
    let mut cancelling = false;
    let result = loop {
        tokio::select! {
            result = &mut result => break result,
            () = interrupt.cancelled(), if !cancelling => {
                cancelling = true;
                if let Err(err) = cluster.cancel(&submitted).await {
                    eprintln!("kaizen: {err}");
                }
            }
            Some((id, answer)) = questions.open.next() => {
                if let Err(err) = cluster.answer(&id, &answer).await {
                    eprintln!("kaizen: {err}");
                }
                questions.done(&id);
            }
            () = tokio::time::sleep(POLL) => shown(&mut reader, &mut questions),
        }
    };
    signals.abort();
    questions.ended = true;
    shown(&mut reader, &mut questions);
    if questions.asking.is_some() {
        eprintln!("kaizen: the turn ended before the question was answered");
    }
    let result = result.map_err(|err| {
        anyhow::anyhow!(
            "session {session}'s turn ({}) failed in the cluster: {err}",
            submitted.invocation
        )
    })?;
    printer.on_event(&Event::Result(result.clone()));
    printer.finish(&result);
    Ok(result.status.exit_code())
}

/// The session the turn belongs to (the resumed one, or a new id) and
/// the turn to submit for `options` to the cluster at `ingress`.
fn turn_request(
    options: &mut RunOptions,
    store: &SessionStore,
    ingress: &str,
) -> Result<(String, TurnRequest), SetupError> {
    let session = match &options.session {
        Choice::Resume(name) => store.resolve(name)?,
        _ => new_session_id(),
    };
    let task = crate::task_input::read_task(options.task.take())?;
    let cwd = match options.plugins.cwd.take() {
        Some(dir) => Some(dir),
        // A session goes on in its own workspace.
        None if matches!(options.session, Choice::Resume(_)) => None,
        None => Some(std::env::current_dir()?),
    };
    let turn = new_session_id();
    let request = TurnRequest {
        turn: turn.clone(),
        task,
        model: options.model.take(),
        cwd: cwd
            .map(|dir| std::path::absolute(&dir).map(|dir| dir.display().to_string()))
            .transpose()?,
        max_cycles: options.max_cycles,
        budget_usd: options.budget_usd,
        timeout: options.timeout,
        permission_mode: options.permissions.permission_mode.take(),
        allowed_tools: std::mem::take(&mut options.permissions.allowed_tools),
        disallowed_tools: std::mem::take(&mut options.permissions.disallowed_tools),
        cluster: Some(ingress.to_string()),
    };
    Ok((session, request))
}

/// The questions the turn waits on, asked one at a time at the terminal,
/// or pointed at `kaizen approve` when there is none.
struct Questions<'a> {
    session: &'a str,
    terminal: Option<Arc<TerminalAnswers>>,
    waiting: VecDeque<(String, Question)>,
    /// The id of the question asked on the terminal now.
    asking: Option<String>,
    /// Its prompt, which ends with the id and the answer.
    open: FuturesUnordered<BoxFuture<'static, (String, Answer)>>,
    /// The turn has ended: no new question is asked.
    ended: bool,
}

impl<'a> Questions<'a> {
    fn new(session: &'a str, terminal: Option<TerminalAnswers>) -> Self {
        Self {
            session,
            terminal: terminal.map(Arc::new),
            waiting: VecDeque::new(),
            asking: None,
            open: FuturesUnordered::new(),
            ended: false,
        }
    }

    fn asked(&mut self, id: String, question: Question) {
        if self.ended {
            return;
        }
        if self.terminal.is_none() {
            eprintln!(
                "kaizen: session {} waits for an answer: {}\n  answer with `kaizen approve {}` \
                 (--allow, --always, --deny REASON, or --answer CHOICE per question)",
                self.session,
                cluster_asks::describe(&question),
                self.session
            );
            return;
        }
        self.waiting.push_back((id, question));
        self.ask_next();
    }

    /// Someone answered `id` (here, or with `kaizen approve`): its prompt,
    /// if open, is withdrawn.
    fn answered(&mut self, id: &str) {
        self.waiting.retain(|(waiting, _)| waiting != id);
        if self.asking.as_deref() == Some(id) {
            self.open.clear();
            self.asking = None;
            eprintln!("\nkaizen: answered elsewhere");
            self.ask_next();
        }
    }

    /// The prompt for `id` ended with an answer.
    fn done(&mut self, id: &str) {
        if self.asking.as_deref() == Some(id) {
            self.asking = None;
        }
        self.ask_next();
    }

    /// Opens the next prompt when none is open.
    fn ask_next(&mut self) {
        let Some(terminal) = &self.terminal else {
            return;
        };
        if self.asking.is_some() || self.ended {
            return;
        }
        let Some((id, question)) = self.waiting.pop_front() else {
            return;
        };
        self.asking = Some(id.clone());
        let terminal = terminal.clone();
        self.open.push(Box::pin(async move {
            let answer = terminal.answer(&question).await;
            (id, answer)
        }));
    }
}
