//! `kaizen run --cluster URL`: a session's turn sent to a Restate cluster
//! of Kaizen workers, its events and result printed as a local run
//! prints them.
//!
//! The events come from the session's stream in the shared session store
//! (the workers write it); the result comes from the engine. Ctrl-C asks
//! the engine to cancel the turn, which ends it as interrupted at its
//! next step.

use crate::output::Printer;
use crate::run_cmd::{self, RunOptions, SetupError, usage};
use crate::session::{self, Choice};
use kaizen_cluster::stream::stream_path;
use kaizen_cluster::{Cluster, StreamReader, TurnRequest};
use kaizen_runtime::{CancellationToken, Event, Observer, new_session_id};
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
    run_cmd::check_limits(&options)?;
    let fork = matches!(options.session, Choice::Fork { .. }).then_some("--fork");
    if let Some(flag) = run_cmd::local_only(&options, fork) {
        return Err(usage(anyhow::anyhow!(
            "{flag} works only on this machine, not with --cluster"
        )));
    }
    let store = session::open_store()?;
    let session = match &options.session {
        Choice::Resume(name) => store.resolve(name)?,
        _ => new_session_id(),
    };
    let task = run_cmd::read_task(options.task.take())?;
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
    };
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
    let signals = tokio::spawn(run_cmd::watch_signals(interrupt.clone()));
    let shown = |reader: &mut StreamReader| {
        for event in reader.read_new() {
            // The result is the engine's, printed once at the end.
            if !matches!(event, Event::Result(_)) {
                printer.on_event(&event);
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
            () = tokio::time::sleep(POLL) => shown(&mut reader),
        }
    };
    signals.abort();
    shown(&mut reader);
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
