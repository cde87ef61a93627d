//! The driver: a run's stages in order. The opening (`SessionStart`, the
//! user's message), then cycles of THINK (one model call, as the planner
//! shapes it), DECIDE (tool calls present → act; none → done, if the
//! planner and the Stop hooks agree), ACT and OBSERVE (run the calls, feed
//! the results back), bounded by cycles, budget, wall clock and
//! interrupts; then the end (`SessionEnd`, the result). Convergence is
//! objective: the model's own claims of being finished are never
//! consulted.

use crate::bounded::Cut;
use crate::calls::PendingCall;
use crate::commit::commit_step;
use crate::context::ContextMeter;
use crate::hook_points::{HookPoint, fire, stopped_by};
use crate::run_start::RunStart;
use crate::session_journal::Entry;
use crate::stages::plan::Driver;
use crate::stages::{act, compact, stop, think, user_messages};
use crate::turn::{Ending, Turn};
use kaizen_hooks::HookAction;
use kaizen_llm::{Message, Role, ToolDefinition};
use kaizen_protocol::{Event, RunResult, Status};
use std::time::Instant;

/// Runs `task` (if any) on the turn's session until the model stops
/// calling tools or a limit is reached. Never fails: every ending is a
/// [`RunResult`].
pub(crate) async fn run(turn: &mut Turn<'_>, task: Option<&str>) -> RunResult {
    let started = Instant::now();
    let mut cycles = Cycles::start(turn);
    let resumed = !turn.state.messages.is_empty();
    begin(turn, &cycles.tools);
    let (status, error) = match user_messages::open(turn, task, &mut cycles.system, resumed).await {
        Err(ending) => ending,
        Ok(()) => cycles.run(turn).await,
    };
    if status == Status::Interrupted {
        let reason = error.as_deref();
        fire(turn, HookPoint::Interrupt { reason }).await;
    }
    let end = Entry::End {
        status,
        error: error.clone(),
    };
    commit_step(turn, end).await;
    let point = HookPoint::SessionEnd {
        status,
        error: error.as_deref(),
    };
    fire(turn, point).await;
    let elapsed = started.elapsed().as_millis() as u64;
    let Cycles {
        origin,
        output,
        model_used,
        ..
    } = cycles;
    let result = origin.result(turn.state, status, output, model_used, error, elapsed);
    turn.observer.on_event(&Event::Result(result.clone()));
    result
}

/// Tells the observer and the journal that the run begins, and with what.
fn begin(turn: &mut Turn<'_>, tools: &[ToolDefinition]) {
    let model = turn.config.model.clone();
    let cwd = turn.config.workspace.display().to_string();
    let tools: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    turn.observer.on_event(&Event::SessionStart {
        session_id: turn.state.session_id.clone(),
        model: model.clone(),
        cwd: cwd.clone(),
        tools: tools.clone(),
    });
    turn.commit(Entry::Start { model, cwd, tools });
}

/// What a run's cycles carry from one to the next.
struct Cycles {
    /// Where the run started in its session.
    origin: RunStart,
    system: String,
    tools: Vec<ToolDefinition>,
    /// The last response's text and model.
    output: String,
    model_used: String,
    /// Stop hooks' refusals in a row.
    continuations: u32,
    planner: Option<Driver>,
    meter: ContextMeter,
}

/// What a cycle's model call answered.
struct Thought {
    text: String,
    calls: Vec<PendingCall>,
}

impl Cycles {
    fn start(turn: &Turn<'_>) -> Self {
        Self {
            origin: RunStart::of(turn.state),
            system: turn.system_prompt(),
            tools: turn.tool_definitions(),
            output: String::new(),
            model_used: turn.config.model.clone(),
            continuations: 0,
            planner: Driver::for_run(turn),
            meter: ContextMeter::default(),
        }
    }

    /// THINK, DECIDE, ACT and OBSERVE until the model stops calling tools
    /// (and the Stop hooks let it stop) or a limit ends the run.
    async fn run(&mut self, turn: &mut Turn<'_>) -> Ending {
        loop {
            if let Err(ending) = self.prepare(turn).await {
                return ending;
            }
            let thought = match self.think(turn).await {
                Ok(thought) => thought,
                Err(ending) => return ending,
            };
            // A message that came while the model answered is its next
            // turn.
            let waiting = turn.config.inbox.as_ref();
            if thought.calls.is_empty() && waiting.is_some_and(|inbox| !inbox.is_empty()) {
                continue;
            }
            if thought.calls.is_empty() {
                if let Some(planner) = self.planner.as_mut()
                    && planner.revise(turn, &self.tools, &thought.text).await
                {
                    continue;
                }
                match stop::may_stop(turn, &thought.text, self.continuations).await {
                    Ok(()) => return (Status::Complete, None),
                    Err(None) => {
                        self.continuations += 1;
                        continue;
                    }
                    Err(Some(ending)) => return ending,
                }
            }
            self.continuations = 0;
            if let Err(ending) = act::act(turn, thought.calls).await {
                return ending;
            }
        }
    }

    /// Before a model call: the limits, the inbox, compaction, and the
    /// `PreThink` hooks.
    async fn prepare(&mut self, turn: &mut Turn<'_>) -> Result<(), Ending> {
        if let Some(ending) = limit_reached(turn, &self.origin) {
            return Err(ending);
        }
        if turn.interrupt.is_cancelled() {
            return Err((Status::Interrupted, Some("interrupted".into())));
        }
        // A step that ended as time ran out (a sub-agent's did) must not
        // be followed by another model call.
        if turn.scope.deadline.is_some_and(|at| Instant::now() >= at) {
            return Err(turn.cut_ending(Cut::Timeout, "starting the next step"));
        }
        user_messages::take_inbox(turn).await?;
        compact::maybe_compact(turn, &self.system, &self.tools, &mut self.meter).await?;
        let point = HookPoint::PreThink {
            cycle: turn.state.cycles + 1,
            model: &turn.config.model,
            message_count: turn.state.messages.len(),
        };
        let hooks = fire(turn, point).await;
        if let HookAction::Stop(reason) = &hooks.action {
            return Err(stopped_by(&hooks.decided_by, reason));
        }
        Ok(())
    }

    /// THINK, as the planner shapes it; the response joins the session
    /// and goes through the `PostThink` hooks.
    async fn think(&mut self, turn: &mut Turn<'_>) -> Result<Thought, Ending> {
        let shaping = match self.planner.as_mut() {
            Some(planner) => planner.shape(turn, &self.tools).await,
            None => Default::default(),
        };
        let planner = self.planner.as_mut();
        let (response, cost) =
            think::think(turn, &self.system, &mut self.tools, &shaping, planner).await?;
        self.model_used.clone_from(&response.model);
        self.output = response.text();
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
        let entry = Entry::Turn {
            message: Message {
                role: Role::Assistant,
                content: response.content,
            },
            usage: response.usage,
            cost_usd: cost,
        };
        commit_step(turn, entry).await;
        self.meter.reported(&usage, turn.state.messages.len());
        turn.observer.on_event(&Event::Assistant {
            cycle: turn.state.cycles,
            model: self.model_used.clone(),
            text: text.clone(),
        });
        let point = HookPoint::PostThink {
            cycle: turn.state.cycles,
            text: &text,
            calls: &calls,
        };
        let hooks = fire(turn, point).await;
        if let HookAction::Stop(reason) = &hooks.action {
            return Err(stopped_by(&hooks.decided_by, reason));
        }
        Ok(Thought { text, calls })
    }
}

/// Cycle and budget limits, checked before each model call.
fn limit_reached(turn: &Turn<'_>, origin: &RunStart) -> Option<Ending> {
    let limits = turn.config;
    let cycles = turn.state.cycles - origin.cycles;
    if cycles >= limits.max_cycles {
        return Some((
            Status::MaxCycles,
            Some(format!(
                "reached the limit of {} cycles (model calls) before the task was done; raise --max-cycles to let it go further",
                limits.max_cycles
            )),
        ));
    }
    // Sub-agents spend from the same budget as the run that started them.
    let spent = turn.scope.spent.cost();
    if spent >= limits.budget_usd {
        return Some((
            Status::BudgetExceeded,
            Some(format!(
                "spent ${spent:.4} of the ${:.4} budget; raise --budget-usd to let it go further",
                limits.budget_usd
            )),
        ));
    }
    None
}
