//! `kaizen run --cluster URL`: a session's turn sent to a Restate cluster
//! of Kaizen workers, its events and result printed as a local run
//! prints them.
//!
//! The events come from the session's stream in the shared session store
//! (the workers write it); the result comes from the engine. Ctrl-C asks
//! the engine to cancel the turn, which ends it as interrupted at its
//! next step ([`Following`] does the following).
//!
//! A question the turn waits on (a tool call to approve, a plugin's
//! choices) is asked here when this is a terminal, and otherwise left for
//! `kaizen approve SESSION`; either answer goes through the engine, and a
//! prompt here is withdrawn when the other answers first.

use crate::cluster_asks::{self, TerminalAnswers};
use crate::output::Printer;
use crate::run_options::RunOptions;
use kaizen_app::session::{self, Choice};
use kaizen_app::session_builder::{SetupError, usage};
use kaizen_cluster::{Answerer, Cluster, Following, Heard, TurnRequest};
use kaizen_loop::new_session_id;
use kaizen_protocol::{CancellationToken, Event, Observer};
use kaizen_session_store::SessionStore;
use std::io::IsTerminal;
use std::sync::Arc;

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
    let admin = admin.map_or_else(|| Cluster::default_admin(ingress), str::to_string);
    let cluster = Cluster::new(ingress, &admin).map_err(anyhow::Error::msg)?;
    let turn = Following::submit(&cluster, &store, &session, &request)
        .await
        .map_err(anyhow::Error::msg)?;
    let invocation = turn.invocation().to_string();
    let printer =
        Arc::new(Printer::new(options.format).with_partial_messages(options.partial_messages));
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(crate::signals::watch(interrupt.clone()));
    let at_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let answerer = at_terminal.then(|| {
        Arc::new(TerminalAnswers::new(printer.clone(), interrupt.clone())) as Arc<dyn Answerer>
    });
    let mut heard = |heard: Heard| match heard {
        Heard::Event(event) => printer.on_event(&event),
        Heard::Unanswerable(question) => eprintln!(
            "kaizen: session {session} waits for an answer: {}\n  answer with `kaizen approve \
             {session}` (--allow, --always, --deny REASON, or --answer CHOICE per question)",
            cluster_asks::describe(&question),
        ),
        Heard::AnsweredElsewhere => eprintln!("\nkaizen: answered elsewhere"),
        Heard::Unreached(err) => eprintln!("kaizen: {err}"),
    };
    let followed = turn
        .follow(&cluster, answerer, &interrupt, &mut heard)
        .await;
    signals.abort();
    if followed.unanswered {
        eprintln!("kaizen: the turn ended before the question was answered");
    }
    let result = followed.result.map_err(|err| {
        anyhow::anyhow!("session {session}'s turn ({invocation}) failed in the cluster: {err}")
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
    let request = TurnRequest {
        turn: new_session_id(),
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
