//! `kaizen run`: one task, start to finish, through the agent loop. This
//! front end reads the task, sets up who answers (the terminal, stream-json
//! input, or a cluster's submitter), has the session built
//! ([`SessionBuilder`]) and runs it until no task is left.

use crate::answerers;
use crate::output::Printer;
use crate::run_options::RunOptions;
use crate::stream_input::StreamInput;
use kaizen_app::session;
use kaizen_app::session_builder::{Ready, SessionBuilder, SetupError, usage};
use kaizen_loop::{Agent, Inbox, SessionState};
use kaizen_protocol::{CancellationToken, Observer, RunResult, Status};
use std::sync::Arc;

/// How a `kaizen run` on Kaizen's own loop ended.
pub enum Finished {
    /// The session's last run ended with this result.
    Ran(Box<RunResult>),
    /// A compaction by hand ended with this exit code.
    Compacted(u8),
}

/// Runs the task; returns the process exit code.
pub async fn run(options: RunOptions) -> Result<u8, SetupError> {
    let printer = Arc::new(Printer::new(options.format));
    let interrupt = CancellationToken::new();
    let signals = tokio::spawn(crate::signals::watch(interrupt.clone()));
    let finished = run_with(options, printer, interrupt).await;
    signals.abort();
    Ok(match finished? {
        Finished::Ran(result) => result.status.exit_code(),
        Finished::Compacted(code) => code,
    })
}

/// Runs the task on Kaizen's loop, reporting to `printer`, until the
/// session's last run ends or `interrupt` stops it (the caller watches
/// for Ctrl-C: see [`crate::signals::watch`]).
pub async fn run_with(
    mut options: RunOptions,
    printer: Arc<Printer>,
    interrupt: CancellationToken,
) -> Result<Finished, SetupError> {
    options.check_limits()?;
    let continued =
        session::continue_from(&session::open_store()?, &options.session).map_err(usage)?;
    let (mut input, first) = crate::task_input::stream_input(&options).await?;
    let compact_only = options.compact_only.is_some();
    let task = crate::task_input::task_for(
        continued.as_ref(),
        first,
        options.task.clone(),
        compact_only,
    )?;
    if let Some(continued) = &continued
        && !compact_only
    {
        options.go_on_from(continued);
    }
    let terminal = answerers::terminal_for(&options, &printer, &interrupt);
    // Messages while the run works: from stream-json input, or typed at
    // the terminal.
    let inbox = (input.is_some() || terminal.is_some()).then(Inbox::default);
    let hosted = options.hosted.as_ref();
    let collaborators =
        answerers::collaborators(&options, &printer, &input, terminal.clone(), inbox.clone())?;
    let start = options.start(continued, task.as_deref());
    let recall_for = (!compact_only).then(|| task.clone().unwrap_or_default());
    let request = options.request(start, recall_for);
    let Ready {
        session,
        mut state,
        config,
    } = SessionBuilder::new(request, collaborators).build().await?;
    // Typed lines go to the run only once the session is built: until
    // then the terminal may be asked whether to trust the workspace.
    if let (Some(terminal), Some(inbox)) = (&terminal, &inbox) {
        terminal.queue_into(inbox.clone());
    }
    for warning in &session.warnings {
        eprintln!("kaizen: warning: {warning}");
    }
    printer.set_warnings(session.warnings.clone());
    let stream = match hosted {
        Some(hosted) => Some(hosted.open_stream(&session.store, &state.session_id)?),
        None => None,
    };
    let observer: &dyn Observer = match &stream {
        Some(stream) => &**stream,
        None => &*printer,
    };
    let agent = session.agent(config, observer);
    if let Some(json) = options.compact_only {
        let compacted = agent.compact_now(&mut state, &interrupt).await;
        session.end(&state.session_id);
        let code = crate::sessions_cmd::compacted_report(&state.session_id, compacted, json)?;
        return Ok(Finished::Compacted(code));
    }
    let result = run_tasks(
        &agent, &mut state, task, &mut input, &inbox, &printer, &interrupt,
    )
    .await;
    for problem in session.end(&state.session_id) {
        eprintln!("kaizen: warning: the session could not be kept in full: {problem}");
    }
    if result.status != Status::Complete && hosted.is_none() {
        eprintln!(
            "kaizen: session {id} stopped ({status}); continue it with: kaizen run --resume {id}",
            id = state.session_id,
            status = result.status.as_str()
        );
    }
    Ok(Finished::Ran(Box::new(result)))
}

/// Runs `task` on `state`, then each task that comes while or after it
/// runs (typed at the terminal, or the next stream-json message), until
/// none is left or `interrupt` stops it; the last run's result.
async fn run_tasks(
    agent: &Agent<'_>,
    state: &mut SessionState,
    mut task: Option<String>,
    input: &mut Option<StreamInput>,
    inbox: &Option<Inbox>,
    printer: &Printer,
    interrupt: &CancellationToken,
) -> RunResult {
    loop {
        // Each run can be interrupted alone; Ctrl-C still reaches it.
        let run_interrupt = interrupt.child_token();
        let run = agent.resume(state, task.as_deref(), &run_interrupt);
        let result = match (input.as_mut(), inbox) {
            (Some(input), Some(inbox)) => input.drive(run, inbox, &run_interrupt).await,
            _ => run.await,
        };
        printer.finish(&result);
        // What came after the run's last model call starts the next run;
        // over stream-json, so does the next message.
        let waiting = inbox.as_ref().map(Inbox::take_all).unwrap_or_default();
        task = match (waiting.is_empty(), input.as_mut()) {
            (false, _) => Some(waiting.join("\n\n")),
            (true, Some(input)) => input.next_message().await,
            (true, None) => None,
        };
        if task.is_none() || interrupt.is_cancelled() {
            return result;
        }
    }
}
