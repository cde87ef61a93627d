//! ACT and OBSERVE for one cycle: the step's call context and spending
//! scope, its calls run through the gatekeeper (and the step executor),
//! the sub-agents and plugin completions they ask for served meanwhile,
//! and the results recorded in the session and the conversation.

use crate::admit::Gatekeeper;
use crate::bounded::bounded_with_grace;
use crate::calls::{CallOutcome, PendingCall, arguments_value};
use crate::commit::commit_step;
use crate::links::{CompletionJob, SubAgentJob, completion_channel, sub_agent_channel};
use crate::results::{result_block, result_text};
use crate::scope::{Meter, Scope};
use crate::serve::serve;
use crate::session_journal::Entry;
use crate::tool_calls::run_calls;
use crate::turn::{Ending, Turn};
use kaizen_llm::{Block, Message, Role};
use kaizen_protocol::{DENIED, Event, Status, ToolCallRecord};
use kaizen_tools::{CallContext, FileHistoryLink, Notes, SessionNotes, SubAgentLink};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

/// Runs the calls and adds their results to the conversation.
pub(crate) async fn act(turn: &mut Turn<'_>, calls: Vec<PendingCall>) -> Result<(), Ending> {
    for call in &calls {
        turn.observer.on_event(&Event::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: arguments_value(&call.arguments),
        });
    }
    let step = Step::open(turn);
    let gate = Gatekeeper {
        registry: turn.tools,
        ctx: &step.ctx,
        guard: turn.guard,
        observer: turn.observer,
        base: &turn.base,
        approver: None,
        stopped: Default::default(),
        steps: turn.config.steps.as_ref(),
        cycle: turn.state.cycles,
        scope: Some(&step.scope),
    };
    let work = serve(
        turn,
        &step.scope,
        run_calls(&gate, calls),
        step.sub_agents,
        step.completions,
    );
    // An interrupt lets the step finish, within a grace period, so that a
    // resumed session neither repeats nor loses it.
    let grace = turn.config.interrupt_grace;
    let run = bounded_with_grace(work, turn.scope.deadline, turn.interrupt, grace).await;
    let stopped = gate.stop_reason();
    drop(gate);
    // Sub-agents' and completions' spending belongs to this session, and
    // what finished calls noted is kept, even when the step was cut.
    let (sub_agent_usage, sub_agent_cost_usd) = step.tally.take();
    let changes = step.notes.changes();
    let Notes {
        files,
        todos,
        active_skill,
    } = step.notes.take();
    turn.state.read_files = files;
    turn.state.todos = todos;
    turn.state.active_skill = active_skill;
    let mut entry = Entry::Results {
        message: None,
        calls: Vec::new(),
        notes: changes,
        sub_agent_usage,
        sub_agent_cost_usd,
    };
    let outcomes = match run {
        Ok(outcomes) => outcomes,
        Err(cut) => {
            commit_step(turn, entry).await;
            report_todos(turn, &step.notes);
            return Err(turn.cut_ending(cut, "running tools"));
        }
    };
    if let Entry::Results { message, calls, .. } = &mut entry {
        let (results, records) = observe(turn, &outcomes);
        *message = Some(results);
        *calls = records;
    }
    commit_step(turn, entry).await;
    // After the results, so that a reader sees the call that set it first.
    report_todos(turn, &step.notes);
    match stopped {
        Some(reason) => Err((Status::Stopped, Some(reason))),
        None => Ok(()),
    }
}

/// What a step's calls share while they run.
struct Step {
    /// Their call context, the session's notes moved into it for the
    /// step.
    ctx: CallContext,
    notes: Arc<SessionNotes>,
    /// What the step's sub-agents and completions spend.
    tally: Arc<Meter>,
    /// The run's scope, counting into `tally` and by call.
    scope: Scope,
    sub_agents: UnboundedReceiver<SubAgentJob>,
    completions: UnboundedReceiver<CompletionJob>,
}

impl Step {
    fn open(turn: &mut Turn<'_>) -> Self {
        // The notes move out of the state for the step and back after it,
        // so SessionState stays the one serializable record of the
        // session.
        let notes = Arc::new(SessionNotes::new(Notes {
            files: std::mem::take(&mut turn.state.read_files),
            todos: std::mem::take(&mut turn.state.todos),
            active_skill: turn.state.active_skill.take(),
        }));
        let (sub_agent_link, sub_agents) = sub_agent_channel();
        let (completion_link, completions) = completion_channel();
        let workspace = &turn.config.workspace;
        let ctx = CallContext {
            session_id: turn.state.session_id.clone(),
            call_id: String::new(),
            workspace: workspace.clone(),
            cwd: workspace.clone(),
            notes: notes.clone(),
            sub_agents: match turn.delegate {
                Some(_) => sub_agent_link,
                None => SubAgentLink::default(),
            },
            history: match turn.step_files() {
                Some(files) => FileHistoryLink::new(Arc::new(files)),
                None => FileHistoryLink::default(),
            },
            completions: completion_link,
        };
        let tally = Arc::new(Meter::default());
        let scope = Scope {
            tally: Some(tally.clone()),
            // A sub-agent's calls count for its parent's call.
            calls: match turn.scope.agent {
                Some(_) => turn.scope.calls.clone(),
                None => Some(Arc::default()),
            },
            ..turn.scope.clone()
        };
        Self {
            ctx,
            notes,
            tally,
            scope,
            sub_agents,
            completions,
        }
    }
}

/// Tells the observer each call's result; the results as the model sees
/// them, and the calls as the session records them.
fn observe(turn: &Turn<'_>, outcomes: &[CallOutcome]) -> (Message, Vec<ToolCallRecord>) {
    let mut records = Vec::with_capacity(outcomes.len());
    let mut blocks: Vec<Block> = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        let block = result_block(outcome, turn.config.max_result_chars);
        let duration_ms = outcome.duration.as_millis() as u64;
        let (status, error) = match &outcome.result {
            Ok(_) => ("success", None),
            Err(err) if outcome.denied => (DENIED, Some(err.message.clone())),
            Err(err) => ("error", Some(err.message.clone())),
        };
        turn.observer.on_event(&Event::ToolResult {
            id: outcome.call.id.clone(),
            name: outcome.call.name.clone(),
            status: status.into(),
            duration_ms,
            output: result_text(&block),
        });
        records.push(ToolCallRecord {
            id: outcome.call.id.clone(),
            name: outcome.call.name.clone(),
            arguments: outcome.input.clone(),
            status: status.into(),
            duration_ms,
            error,
        });
        blocks.push(block);
    }
    let message = Message {
        role: Role::User,
        content: blocks,
    };
    (message, records)
}

/// Tells the observer the session's new todo list, if a tool set one.
fn report_todos(turn: &Turn<'_>, notes: &SessionNotes) {
    if notes.todos_set() {
        turn.observer.on_event(&Event::Todos {
            todos: turn.state.todos.clone(),
        });
    }
}
