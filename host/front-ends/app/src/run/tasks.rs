//! A session's runs, one after another: each next task comes from what
//! waits in the session's inbox when a run ends (typed at a terminal,
//! sent by an embedding program), else from the front end's input.

use super::gather::ToolGatherer;
use crate::memory_setup;
use crate::session_builder::Session;
use kaizen_claude::catalogue::Loaded;
use kaizen_claude::context;
use kaizen_loop::{Agent, Inbox, SessionState};
use kaizen_protocol::{CancellationToken, RunResult};
use std::future::Future;

/// Where a session's next tasks come from: a front end's input, read
/// while a run works (stream-json's messages, interrupts and answers)
/// and between runs.
pub trait NextTasks {
    /// Drives `run` to its end and gives its result; an input read while
    /// it works moves the messages that come into `inbox` (the session's,
    /// when it has one) and stops the run through `interrupt`.
    fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        inbox: Option<&Inbox>,
        interrupt: &CancellationToken,
    ) -> impl Future<Output = RunResult>;

    /// The next task once a run ended and nothing waits in the inbox,
    /// waiting for it; `None` when no more will come.
    fn next(&mut self) -> impl Future<Output = Option<String>>;
}

/// No input: a run goes to its end alone, and no task comes after the
/// last (but what waits in the inbox).
pub struct NoMoreTasks;

impl NextTasks for NoMoreTasks {
    async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        _inbox: Option<&Inbox>,
        _interrupt: &CancellationToken,
    ) -> RunResult {
        run.await
    }

    async fn next(&mut self) -> Option<String> {
        None
    }
}

/// An input that may be missing: without it, as [`NoMoreTasks`].
impl<T: NextTasks> NextTasks for Option<T> {
    async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        inbox: Option<&Inbox>,
        interrupt: &CancellationToken,
    ) -> RunResult {
        match self {
            Some(input) => input.drive(run, inbox, interrupt).await,
            None => run.await,
        }
    }

    async fn next(&mut self) -> Option<String> {
        match self {
            Some(input) => input.next().await,
            None => None,
        }
    }
}

/// Claude Code's built-in commands that mean something without a
/// terminal, answered without a model call (they win over a command or
/// skill of the same name, as Claude Code's do).
enum BuiltIn {
    /// `/cost`: what the session has spent so far.
    Cost,
    /// `/clear`: the conversation starts over, in the same session.
    Clear,
    /// `/memory`: the instruction files and memory entries the session
    /// works with, and how to change them.
    Memory,
}

impl BuiltIn {
    /// The built-in command `task` is, if it is one (alone on its line).
    fn of(task: &str) -> Option<Self> {
        match task.trim() {
            "/cost" => Some(Self::Cost),
            "/clear" => Some(Self::Clear),
            "/memory" => Some(Self::Memory),
            _ => None,
        }
    }

    /// Its answer, on `state` of `session`.
    fn answer(self, agent: &Agent<'_>, state: &mut SessionState, session: &Session) -> RunResult {
        match self {
            Self::Cost => {
                let text = format!(
                    "Session {}: ${:.4} over {} model calls, {} input and {} output tokens.",
                    state.session_id,
                    state.cost_usd,
                    state.cycles,
                    state.usage.total_input(),
                    state.usage.output_tokens
                );
                agent.answer(state, text)
            }
            Self::Clear => agent.clear(state),
            Self::Memory => {
                let setup = &session.setup;
                let text = memory_setup::overview(
                    &setup.kaizen_home,
                    &setup.memory,
                    &setup.policy.workspace,
                );
                agent.answer(state, text)
            }
        }
    }
}

/// A typed command's prompt with what it gathers (`` !`cmd` ``, `@file`)
/// in place, through the session's tools; as it is when it asks for
/// nothing, or when `interrupt` stops the gathering.
async fn gathered(
    agent: &Agent<'_>,
    session_id: &str,
    loaded: &Loaded,
    interrupt: &CancellationToken,
) -> String {
    if !context::wants_gathering(&loaded.text) {
        return loaded.text.clone();
    }
    let gatherer = ToolGatherer::new(agent, session_id, loaded.narrows.clone());
    tokio::select! {
        text = context::gather(&loaded.text, &gatherer) => text,
        () = interrupt.cancelled() => loaded.text.clone(),
    }
}

/// Runs `task` on `state`, then each task that comes while or after it
/// runs, until none is left or `interrupt` stops it; the last run's
/// result. A task that is one of the built-in commands is answered
/// without the model; one that starts with one of `catalogue`'s commands
/// runs that command's prompt (from `session`'s catalogue).
pub(super) async fn run_tasks(
    agent: &Agent<'_>,
    state: &mut SessionState,
    mut task: Option<String>,
    tasks: &mut impl NextTasks,
    session: &Session,
    interrupt: &CancellationToken,
) -> RunResult {
    let catalogue = &session.catalogue;
    let inbox = agent.config.inbox.clone();
    loop {
        // `/name args` runs the command `name`: the model gets its prompt,
        // and its allowed-tools narrow this task's calls. A new task ends
        // what the last one's skill narrowed.
        state.active_skill = None;
        // Each run can be interrupted alone; the caller's interrupt still
        // reaches it.
        let run_interrupt = interrupt.child_token();
        let result = match task.as_deref().and_then(BuiltIn::of) {
            Some(built_in) => {
                let answered = built_in.answer(agent, state, session);
                let done = std::future::ready(answered);
                tasks.drive(done, inbox.as_ref(), &run_interrupt).await
            }
            None => {
                let command = task.as_deref().and_then(|t| catalogue.expand_task(t));
                let run = async {
                    if let Some(loaded) = command {
                        task =
                            Some(gathered(agent, &state.session_id, &loaded, &run_interrupt).await);
                        state.active_skill = loaded.narrows;
                    }
                    agent.resume(state, task.as_deref(), &run_interrupt).await
                };
                tasks.drive(run, inbox.as_ref(), &run_interrupt).await
            }
        };
        // What came after the run's last model call starts the next run;
        // so does the input's next message.
        let waiting = inbox.as_ref().map(Inbox::take_all).unwrap_or_default();
        task = if waiting.is_empty() {
            tasks.next().await
        } else {
            Some(waiting.join("\n\n"))
        };
        if task.is_none() || interrupt.is_cancelled() {
            return result;
        }
    }
}
