//! The loop: THINK (one model call), DECIDE (tool calls present → act; none
//! → done), ACT (run the calls), OBSERVE (feed results back), bounded by
//! cycles, budget, wall clock and interrupts. Convergence is objective: the
//! model's own claims of being finished are never consulted.

use crate::act::{PendingCall, arguments_value};
use crate::agent_config::AgentConfig;
use crate::bounded::Cut;
use crate::context::ContextMeter;
use crate::guard::Guard;
use crate::hook_points::{HookSite, stopped_by};
use crate::journal::{Entry, Journal};
use crate::prompt::{system_prompt, today};
use crate::run_start::RunStart;
use crate::state::SessionState;
use crate::sub_agent::Scope;
use kaizen_hooks::{HookAction, HookEvent};
use kaizen_llm::{Message, Provider, Role, ToolDefinition, Usage};
use kaizen_protocol::{Event, Observer, RunResult, Status};
use kaizen_tools::ToolRegistry;
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Prices a model call: USD for `usage` on `model`.
pub type Pricing<'a> = &'a (dyn Fn(&str, &Usage) -> f64 + Send + Sync);

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

/// How the loop ended, with the reason for an early end.
pub(crate) type Ending = (Status, Option<String>);

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
        let deadline = self.config.timeout.map(|limit| Instant::now() + limit);
        self.run_in(state, task, interrupt, &Scope::outermost(deadline))
            .await
    }

    /// Applies `entry` to `state` and tells the journal.
    pub(crate) fn commit(&self, state: &mut SessionState, entry: Entry) {
        state.apply(&entry);
        if let Some(journal) = &self.journal {
            crate::journal::record_outside_executor(journal.as_ref(), &entry, state);
        }
    }

    /// [`Self::commit`] for the entries that may checkpoint the session (a
    /// model turn, a step's results, the end): `PreCheckpoint` hooks run
    /// before the checkpoint is handed over, `PostCheckpoint` hooks once it
    /// is written (the loop waits for the write only when one wants it).
    pub(crate) async fn commit_step(
        &self,
        state: &mut SessionState,
        entry: Entry,
        site: HookSite<'_>,
    ) {
        let hooks = &self.guard.hooks;
        let watched =
            hooks.wants(HookEvent::PreCheckpoint) || hooks.wants(HookEvent::PostCheckpoint);
        let Some(journal) = self.journal.as_ref().filter(|_| watched) else {
            return self.commit(state, entry);
        };
        state.apply(&entry);
        let due = journal.takes_checkpoint(&entry, state);
        let reason = if matches!(entry, Entry::End { .. }) {
            "end"
        } else {
            "periodic"
        };
        let cycle = state.cycles;
        let fields = || json!({"cycle": cycle, "reason": reason});
        if due {
            self.hook(
                state,
                site,
                HookEvent::PreCheckpoint,
                Some(reason),
                fields(),
            )
            .await;
        }
        crate::journal::record_outside_executor(journal.as_ref(), &entry, state);
        if due && hooks.wants(HookEvent::PostCheckpoint) {
            let flushing = journal.clone();
            let _ = tokio::task::spawn_blocking(move || flushing.flush()).await;
            self.hook(
                state,
                site,
                HookEvent::PostCheckpoint,
                Some(reason),
                fields(),
            )
            .await;
        }
    }

    /// Runs `task` within `scope`: the outermost run's, or a sub-agent's
    /// share of its parent's. Boxed because a run may contain runs.
    pub(crate) fn run_in<'r>(
        &'r self,
        state: &'r mut SessionState,
        task: Option<&'r str>,
        interrupt: &'r CancellationToken,
        scope: &'r Scope,
    ) -> Pin<Box<dyn Future<Output = RunResult> + Send + 'r>> {
        Box::pin(self.run_scoped(state, task, interrupt, scope))
    }

    async fn run_scoped(
        &self,
        state: &mut SessionState,
        task: Option<&str>,
        interrupt: &CancellationToken,
        scope: &Scope,
    ) -> RunResult {
        let started = Instant::now();
        let start = RunStart::of(state);
        let base = self.payload_base(state, scope);
        let site = HookSite {
            base: &base,
            scope,
            interrupt,
        };
        let mut system = self.system_prompt();
        let mut tools = self.tool_definitions();
        let cwd = self.config.workspace.display().to_string();
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        self.observer.on_event(&Event::SessionStart {
            session_id: state.session_id.clone(),
            model: self.config.model.clone(),
            cwd: cwd.clone(),
            tools: names.clone(),
        });
        let resumed = !state.messages.is_empty();
        self.commit(
            state,
            Entry::Start {
                model: self.config.model.clone(),
                cwd,
                tools: names,
            },
        );
        let mut output = String::new();
        let mut model_used = self.config.model.clone();
        let (status, error) = match self.open(state, task, site, &mut system, resumed).await {
            Err(ending) => ending,
            Ok(()) => {
                self.cycles(
                    state,
                    &system,
                    &mut tools,
                    site,
                    &start,
                    &mut output,
                    &mut model_used,
                )
                .await
            }
        };
        if status == Status::Interrupted {
            let fields = json!({"reason": error});
            self.hook(state, site, HookEvent::Interrupt, None, fields)
                .await;
        }
        let end = Entry::End {
            status,
            error: error.clone(),
        };
        self.commit_step(state, end, site).await;
        let fields = json!({"reason": status.as_str(), "error": error});
        self.hook(
            state,
            site,
            HookEvent::SessionEnd,
            Some(status.as_str()),
            fields,
        )
        .await;
        let result = start.result(
            state,
            status,
            output,
            model_used,
            error,
            started.elapsed().as_millis() as u64,
        );
        self.observer.on_event(&Event::Result(result.clone()));
        result
    }

    /// THINK, DECIDE, ACT and OBSERVE until the model stops calling tools
    /// (and the Stop hooks let it stop) or a limit ends the run.
    #[allow(clippy::too_many_arguments)]
    async fn cycles(
        &self,
        state: &mut SessionState,
        system: &str,
        tools: &mut Vec<ToolDefinition>,
        site: HookSite<'_>,
        start: &RunStart,
        output: &mut String,
        model_used: &mut String,
    ) -> Ending {
        let HookSite {
            scope, interrupt, ..
        } = site;
        let mut continuations = 0;
        let mut planner = self.planner_driver(scope);
        let mut meter = ContextMeter::default();
        loop {
            if let Some(ending) = self.limit_reached(state, start, scope) {
                return ending;
            }
            if interrupt.is_cancelled() {
                return (Status::Interrupted, Some("interrupted".into()));
            }
            // A step that ended as time ran out (a sub-agent's did) must not
            // be followed by another model call.
            if scope.deadline.is_some_and(|at| Instant::now() >= at) {
                return self.cut_ending(Cut::Timeout, "starting the next step");
            }
            if let Err(ending) = self.take_inbox(state, site).await {
                return ending;
            }
            if let Err(ending) = self
                .maybe_compact(state, site, system, tools, &mut meter)
                .await
            {
                return ending;
            }
            let cycle = state.cycles + 1;
            let fields = json!({"cycle": cycle, "model": self.config.model, "message_count": state.messages.len()});
            let hooks = self
                .hook(state, site, HookEvent::PreThink, None, fields)
                .await;
            if let HookAction::Stop(reason) = &hooks.action {
                return stopped_by(&hooks.decided_by, reason);
            }
            // THINK, as the planner shapes it
            let shaping = self
                .before_think(state, &mut planner, tools, scope, interrupt)
                .await;
            let thought = self
                .think_shaped(
                    state,
                    system,
                    tools,
                    &shaping,
                    &mut planner,
                    scope,
                    interrupt,
                )
                .await;
            let (response, cost) = match thought {
                Ok(answer) => answer,
                Err(ending) => return ending,
            };
            model_used.clone_from(&response.model);
            *output = response.text();
            // DECIDE
            let calls: Vec<PendingCall> = response
                .tool_calls()
                .map(|(id, name, arguments)| PendingCall {
                    id: id.into(),
                    name: name.into(),
                    arguments: arguments.into(),
                })
                .collect();
            let text = response.text();
            let usage = response.usage;
            let turn = Entry::Turn {
                message: Message {
                    role: Role::Assistant,
                    content: response.content,
                },
                usage: response.usage,
                cost_usd: cost,
            };
            self.commit_step(state, turn, site).await;
            meter.reported(&usage, state.messages.len());
            self.observer.on_event(&Event::Assistant {
                cycle: state.cycles,
                model: model_used.clone(),
                text: text.clone(),
            });
            if self.guard.hooks.wants(HookEvent::PostThink) {
                let planned: Vec<_> = calls
                    .iter()
                    .map(|c| json!({"id": c.id, "name": c.name, "input": arguments_value(&c.arguments)}))
                    .collect();
                let fields = json!({"cycle": state.cycles, "text": text, "tool_calls": planned});
                let hooks = self
                    .hook(state, site, HookEvent::PostThink, None, fields)
                    .await;
                if let HookAction::Stop(reason) = &hooks.action {
                    return stopped_by(&hooks.decided_by, reason);
                }
            }
            // A message that came while the model answered is its next turn.
            if calls.is_empty()
                && self
                    .config
                    .inbox
                    .as_ref()
                    .is_some_and(|inbox| !inbox.is_empty())
            {
                continue;
            }
            if calls.is_empty() {
                if self
                    .revise(state, &mut planner, tools, &text, scope, interrupt)
                    .await
                {
                    continue;
                }
                match self.may_stop(state, site, &text, continuations).await {
                    Ok(()) => return (Status::Complete, None),
                    Err(None) => {
                        continuations += 1;
                        continue;
                    }
                    Err(Some(ending)) => return ending,
                }
            }
            continuations = 0;
            // ACT and OBSERVE
            if let Err(ending) = self.act(state, calls, site).await {
                return ending;
            }
        }
    }

    /// The system prompt of this agent's model calls.
    pub(crate) fn system_prompt(&self) -> String {
        let mut system = system_prompt(&self.config.workspace, &today());
        if let Some(instructions) = &self.config.instructions {
            system.push_str(&format!("\n{instructions}\n"));
        }
        system
    }

    pub(crate) fn tool_definitions(&self) -> Vec<ToolDefinition> {
        // A tool a deny rule names whole is not offered at all.
        self.tools
            .specs()
            .filter(|spec| !self.guard.permissions.hides(&spec.name))
            .map(|spec| ToolDefinition {
                name: spec.name.clone(),
                description: spec.description.clone(),
                input_schema: spec.input_schema.clone(),
            })
            .collect()
    }

    /// Cycle and budget limits, checked before each model call.
    fn limit_reached(
        &self,
        state: &SessionState,
        start: &RunStart,
        scope: &Scope,
    ) -> Option<Ending> {
        let cycles = state.cycles - start.cycles;
        if cycles >= self.config.max_cycles {
            return Some((
                Status::MaxCycles,
                Some(format!(
                    "reached the limit of {} cycles (model calls) before the task was done; raise --max-cycles to let it go further",
                    self.config.max_cycles
                )),
            ));
        }
        // Sub-agents spend from the same budget as the run that started them.
        let spent = scope.spent.cost();
        if spent >= self.config.budget_usd {
            return Some((
                Status::BudgetExceeded,
                Some(format!(
                    "spent ${spent:.4} of the ${:.4} budget; raise --budget-usd to let it go further",
                    self.config.budget_usd
                )),
            ));
        }
        None
    }

    pub(crate) fn cut_ending(&self, cut: Cut, during: &str) -> Ending {
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
}
