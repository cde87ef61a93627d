//! The agent: an embedder's handle on the loop. It holds the
//! collaborators (provider, tools, pricing, observer, journal, guard) and
//! the config; each call builds the [`Turn`] its stages share and hands
//! it to the driver (`run.rs`), or to the compaction stage.

use crate::agent_config::AgentConfig;
use crate::guard::Guard;
use crate::pricing::Pricing;
use crate::run::run;
use crate::run_start::RunStart;
use crate::scope::Scope;
use crate::session_journal::{Entry, Journal};
use crate::stages::{compact, sub_agent};
use crate::state::SessionState;
use crate::turn::{Turn, payload_base};
use kaizen_llm::Provider;
use kaizen_protocol::{Event, Observer, RunResult, Status};
use kaizen_tools::ToolRegistry;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Runs tasks: a provider, the tools, limits, and who is told.
pub struct Agent<'a> {
    /// The model API.
    pub provider: &'a dyn Provider,
    /// The tools on offer.
    pub tools: &'a ToolRegistry,
    /// What model calls cost.
    pub pricing: Pricing<'a>,
    /// Limits and workspace.
    pub config: AgentConfig,
    /// Who hears about each step.
    pub observer: &'a dyn Observer,
    /// Who keeps each change to the session, and files before tools
    /// change them, when they are kept.
    pub journal: Option<Arc<dyn Journal>>,
    /// Permission rules and mode, hooks, and who approves: shared with
    /// sub-agents, so every call of the session passes them.
    pub guard: Arc<Guard>,
}

impl Agent<'_> {
    /// Runs `task` on `state` until the model stops calling tools or a limit
    /// is reached. Never fails: every ending is a [`RunResult`].
    pub async fn run(
        &self,
        state: &mut SessionState,
        task: &str,
        interrupt: &CancellationToken,
    ) -> RunResult {
        self.resume(state, Some(task), interrupt).await
    }

    /// Goes on with a session that ran before (restored from a
    /// checkpoint and its log). Calls that were cut off get a result
    /// saying so, never a silent repeat; `task`, if any, follows as the
    /// user's next message. Without either, the model continues from the
    /// last results.
    pub async fn resume(
        &self,
        state: &mut SessionState,
        task: Option<&str>,
        interrupt: &CancellationToken,
    ) -> RunResult {
        let mut turn = self.turn(state, interrupt);
        Box::pin(run(&mut turn, task)).await
    }

    /// Compacts `state`'s conversation now, whatever its size (`kaizen
    /// sessions compact`): summarised, as the run would see it next. The
    /// compaction's event, or `None` when nothing was compacted (a hook
    /// kept it whole, one turn only, the summary failed: a notice says).
    pub async fn compact_now(
        &self,
        state: &mut SessionState,
        interrupt: &CancellationToken,
    ) -> Result<Option<Event>, String> {
        let mut turn = self.turn(state, interrupt);
        compact::compact_now(&mut turn).await
    }

    /// Answers without a model call (a built-in command's answer, such
    /// as `/cost`'s): `text` is told as the model's would be, and is the
    /// result's output.
    pub fn answer(&self, state: &SessionState, text: String) -> RunResult {
        let model = self.config.model.clone();
        for event in [
            Event::TextDelta { text: text.clone() },
            Event::Assistant {
                cycle: state.cycles,
                model: model.clone(),
                text: text.clone(),
            },
        ] {
            self.observer.on_event(&event);
        }
        let result = RunStart::of(state).result(state, Status::Complete, text, model, None, 0);
        self.observer.on_event(&Event::Result(result.clone()));
        result
    }

    /// Clears `state`'s conversation (`/clear`): the session goes on, its
    /// id, spending and files, with no messages. The log keeps the
    /// clearing, so a resumed session does not bring them back.
    pub fn clear(&self, state: &mut SessionState) -> RunResult {
        let interrupt = CancellationToken::new();
        self.turn(state, &interrupt).commit(Entry::Clear);
        self.answer(state, "The conversation was cleared.".into())
    }

    /// The turn of an outermost run on `state`: its own deadline and
    /// budget, and sub-agents for its tool calls.
    fn turn<'r>(
        &'r self,
        state: &'r mut SessionState,
        interrupt: &'r CancellationToken,
    ) -> Turn<'r> {
        let config = &self.config;
        let scope = Scope::outermost(config.timeout.map(|limit| Instant::now() + limit));
        Turn {
            provider: self.provider,
            tools: self.tools,
            pricing: self.pricing,
            observer: self.observer,
            journal: self.journal.as_ref(),
            guard: &self.guard,
            config,
            base: payload_base(config, &self.guard, &state.session_id, &scope),
            scope,
            interrupt,
            delegate: Some(sub_agent::delegate),
            state,
        }
    }
}
