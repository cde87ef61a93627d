//! The turn context: what the stages of a run share. A [`Turn`] holds the
//! agent's collaborators by reference (provider, tools, pricing, observer,
//! journal, guard), the run's settings (limits and strategies), where it
//! stands (its scope of spending and deadline, its interrupt, what hook payloads
//! carry), the session's state, and who runs the sub-agents its tool
//! calls ask for. Each stage (`stages/`) is a function of a `&mut Turn`.

use crate::agent_config::AgentConfig;
use crate::bounded::Cut;
use crate::guard::Guard;
use crate::hooks::PayloadBase;
use crate::links::SubAgentJob;
use crate::pricing::Pricing;
use crate::prompt::{system_prompt, today};
use crate::scope::Scope;
use crate::session_journal::{Entry, Journal, StepFiles};
use crate::state::SessionState;
use kaizen_llm::{Provider, ToolDefinition};
use kaizen_protocol::{Event, Observer, PermissionMode, Status};
use kaizen_tools::ToolRegistry;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How the loop ended, with the reason for an early end.
pub(crate) type Ending = (Status, Option<String>);

/// Runs a sub-agent that a tool call of `parent`'s step asked for, within
/// the step's `scope`, and answers the call.
///
/// A function the turn is given rather than a module the stages import:
/// a sub-agent's run is a run, so the stage that starts one calls the
/// driver that calls the stages. `agent.rs`, above both, hands it to the
/// outermost run's turn; a sub-agent's turn has none (a sub-agent cannot
/// start sub-agents), which keeps the files free of an import cycle.
pub(crate) type Delegate = for<'s> fn(
    &'s Turn<'_>,
    &'s Scope,
    SubAgentJob,
) -> Pin<Box<dyn Future<Output = ()> + Send + 's>>;

/// What the stages of a run share.
pub(crate) struct Turn<'r> {
    /// The model API.
    pub provider: &'r dyn Provider,
    /// The tools on offer.
    pub tools: &'r ToolRegistry,
    /// What model calls cost.
    pub pricing: Pricing<'r>,
    /// Who hears about each step.
    pub observer: &'r dyn Observer,
    /// Who keeps each change to the session, when it is kept.
    pub journal: Option<&'r Arc<dyn Journal>>,
    /// Rules, hooks and who approves.
    pub guard: &'r Arc<Guard>,
    /// The model, workspace, limits and strategies (model roles,
    /// plugins' completions, planner, context policy, inbox, step
    /// executor).
    pub config: &'r AgentConfig,
    /// The run's deadline and spending, shared with its sub-agents.
    pub scope: Scope,
    /// The run's interrupt.
    pub interrupt: &'r CancellationToken,
    /// What every hook payload of the run carries.
    pub base: PayloadBase,
    /// Who runs the sub-agents tool calls ask for; none in a sub-agent.
    pub delegate: Option<Delegate>,
    /// The session.
    pub state: &'r mut SessionState,
}

impl Turn<'_> {
    /// Applies `entry` to the state and tells the journal.
    pub fn commit(&mut self, entry: Entry) {
        self.state.apply(&entry);
        if let Some(journal) = self.journal {
            crate::session_journal::record_outside_executor(journal.as_ref(), &entry, self.state);
        }
    }

    /// The ending of a run cut off `during` something.
    pub fn cut_ending(&self, cut: Cut, during: &str) -> Ending {
        match cut {
            Cut::Timeout => (
                Status::Timeout,
                Some(format!(
                    "the run's time limit of {} s ran out while {during}",
                    self.config.timeout.unwrap_or_default().as_secs_f64()
                )),
            ),
            Cut::Interrupted => (
                Status::Interrupted,
                Some(format!("interrupted while {during}")),
            ),
        }
    }

    /// The system prompt of the run's model calls.
    pub fn system_prompt(&self) -> String {
        let mut system = match &self.config.system_prompt {
            Some(replaced) => replaced.clone(),
            None => system_prompt(&self.config.workspace, &today()),
        };
        if let Some(instructions) = &self.config.instructions {
            system.push_str(&format!("\n{instructions}\n"));
        }
        system
    }

    /// The tools the model is offered.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        // A tool a deny rule names whole is not offered at all.
        self.tools
            .specs()
            .filter(|spec| !self.guard.permissions.hides(spec))
            .map(|spec| ToolDefinition {
                name: spec.name.clone(),
                description: spec.description.clone(),
                input_schema: spec.input_schema.clone(),
            })
            .collect()
    }

    /// The file history for the calls of the current step (the cycle that
    /// asked for them), when the session is kept.
    pub fn step_files(&self) -> Option<StepFiles> {
        self.journal.map(|journal| StepFiles {
            journal: journal.clone(),
            step: self.state.cycles,
        })
    }

    /// Tells the observer a notice from `source`.
    pub fn notice(&self, source: &str, text: String) {
        self.observer.on_event(&Event::Notice {
            source: source.into(),
            text,
        });
    }
}

/// The mode a run's calls are judged under: the session's, narrowed by
/// `limit` (a sub-agent type's own mode).
pub(crate) fn effective_mode(guard: &Guard, limit: Option<PermissionMode>) -> PermissionMode {
    let mode = guard.permissions.mode();
    limit.map_or(mode, |limit| mode.at_most(limit))
}

/// What every hook payload of a run on `session_id` within `scope` carries.
pub(crate) fn payload_base(
    config: &AgentConfig,
    guard: &Guard,
    session_id: &str,
    scope: &Scope,
) -> PayloadBase {
    PayloadBase {
        session_id: session_id.to_string(),
        transcript_path: config
            .transcript_path
            .as_ref()
            .map(|path| path.display().to_string()),
        cwd: config.workspace.display().to_string(),
        permission_mode: effective_mode(guard, config.permission_mode).as_str(),
        agent: scope.agent.clone(),
        mode_limit: config.permission_mode,
    }
}
