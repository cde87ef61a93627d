//! ACT and OBSERVE for one cycle: the step's call context and spending
//! scope, its calls run through the gatekeeper (and the step executor),
//! the sub-agents and plugin completions they ask for served meanwhile,
//! and the results recorded in the session and the conversation.

use crate::act::{PendingCall, arguments_value, result_block, result_text, run_calls};
use crate::admit::Gatekeeper;
use crate::agent::{Agent, Ending};
use crate::bounded::bounded_with_grace;
use crate::hook_points::HookSite;
use crate::journal::{Entry, Journal, StepFiles};
use crate::state::SessionState;
use crate::sub_agent::{self, Meter, Scope};
use kaizen_llm::{Message, Role};
use kaizen_protocol::{DENIED, Event, Status, ToolCallRecord};
use kaizen_tools::{CallContext, FileHistoryLink, Notes, SessionNotes, SubAgentLink};
use std::sync::Arc;

impl Agent<'_> {
    /// Runs the calls and adds their results to the conversation.
    pub(crate) async fn act(
        &self,
        state: &mut SessionState,
        calls: Vec<PendingCall>,
        site: HookSite<'_>,
    ) -> Result<(), Ending> {
        let HookSite {
            base,
            scope,
            interrupt,
        } = site;
        for call in &calls {
            self.observer.on_event(&Event::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: arguments_value(&call.arguments),
            });
        }
        // The notes move out of the state for the step and back after it,
        // so SessionState stays the one serializable record of the session.
        let notes = Arc::new(SessionNotes::new(Notes {
            files: std::mem::take(&mut state.read_files),
            todos: std::mem::take(&mut state.todos),
        }));
        let (sub_agents, requests) = sub_agent::channel();
        let (completions, completion_requests) = crate::completions::channel();
        let ctx = CallContext {
            session_id: state.session_id.clone(),
            call_id: String::new(),
            workspace: self.config.workspace.clone(),
            cwd: self.config.workspace.clone(),
            notes: notes.clone(),
            sub_agents: if scope.may_delegate {
                sub_agents
            } else {
                SubAgentLink::default()
            },
            history: match &self.journal {
                Some(journal) => FileHistoryLink::new(Arc::new(self.step_files(journal, state))),
                None => FileHistoryLink::default(),
            },
            completions,
        };
        let tally = Arc::new(Meter::default());
        let sub_scope = Scope {
            tally: Some(tally.clone()),
            // A sub-agent's calls count for its parent's call.
            calls: match scope.agent {
                Some(_) => scope.calls.clone(),
                None => Some(Arc::default()),
            },
            ..scope.clone()
        };
        let gate = Gatekeeper {
            registry: self.tools,
            ctx: &ctx,
            guard: &self.guard,
            observer: self.observer,
            base,
            approver: None,
            stopped: Default::default(),
            steps: self.config.steps.as_ref(),
            cycle: state.cycles,
            scope: Some(&sub_scope),
        };
        let work = self.serving_step(
            run_calls(&gate, calls),
            requests,
            completion_requests,
            state,
            &sub_scope,
            interrupt,
        );
        // An interrupt lets the step finish, within a grace period, so that
        // a resumed session neither repeats nor loses it.
        let run =
            bounded_with_grace(work, scope.deadline, interrupt, self.config.interrupt_grace).await;
        // Sub-agents' and completions' spending belongs to this session, and what finished
        // calls noted is kept, even when the step was cut.
        let (sub_agent_usage, sub_agent_cost_usd) = tally.take();
        let changes = notes.changes();
        let Notes { files, todos } = notes.take();
        state.read_files = files;
        state.todos = todos;
        let mut step = Entry::Results {
            message: None,
            calls: Vec::new(),
            notes: changes,
            sub_agent_usage,
            sub_agent_cost_usd,
        };
        let outcomes = match run {
            Ok(outcomes) => outcomes,
            Err(cut) => {
                self.commit_step(state, step, site).await;
                self.report_todos(&notes, state);
                return Err(self.cut_ending(cut, "running tools"));
            }
        };
        let mut records = Vec::with_capacity(outcomes.len());
        let mut blocks = Vec::with_capacity(outcomes.len());
        for outcome in &outcomes {
            let block = result_block(outcome, self.config.max_result_chars);
            let duration_ms = outcome.duration.as_millis() as u64;
            let (status, error) = match &outcome.result {
                Ok(_) => ("success", None),
                Err(err) if outcome.denied => (DENIED, Some(err.message.clone())),
                Err(err) => ("error", Some(err.message.clone())),
            };
            self.observer.on_event(&Event::ToolResult {
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
        if let Entry::Results { message, calls, .. } = &mut step {
            *message = Some(Message {
                role: Role::User,
                content: blocks,
            });
            *calls = records;
        }
        self.commit_step(state, step, site).await;
        // After the results, so that a reader sees the call that set it first.
        self.report_todos(&notes, state);
        match gate.stop_reason() {
            Some(reason) => Err((Status::Stopped, Some(reason))),
            None => Ok(()),
        }
    }

    /// The file history for the calls of the current step: the cycle that
    /// asked for them.
    pub(crate) fn step_files(&self, journal: &Arc<dyn Journal>, state: &SessionState) -> StepFiles {
        StepFiles {
            journal: journal.clone(),
            step: state.cycles,
        }
    }

    /// Tells the observer the session's new todo list, if a tool set one.
    pub(crate) fn report_todos(&self, notes: &SessionNotes, state: &SessionState) {
        if notes.todos_set() {
            self.observer.on_event(&Event::Todos {
                todos: state.todos.clone(),
            });
        }
    }
}
