//! PLAN: a run's planner around its THINK steps: `plan` before each
//! model call (system additions for that call, user messages and a todo
//! list that stay, several candidate responses), `select` among
//! candidates, and `verify` on a final answer, with revisions bounded. A
//! planner never ends a run. One that fails (a trap, its time limit, a bad
//! answer) is reported and switched off: the run goes on as plain ReAct.
//! Sub-agents run without the planner.

use crate::planner_setup::PlannerSetup;
use crate::serve::with_completions;
use crate::session_journal::Entry;
use crate::state::SessionState;
use crate::turn::Turn;
use kaizen_llm::{Block, Message, Response, Role, ToolDefinition, Usage};
use kaizen_planning::{PlannerCall, ThinkContext, ThinkPlan, Verdict};
use kaizen_protocol::Event;
use kaizen_tools::{Notes, SessionNotes};
use std::future::Future;
use std::sync::Arc;

/// The planner of a run as it goes.
pub(crate) struct Driver {
    setup: PlannerSetup,
    /// Switched off after a failure.
    failed: bool,
    revisions: u32,
}

/// How the coming model call is shaped.
#[derive(Default)]
pub(crate) struct Shaping {
    /// Added to the system prompt for this call.
    pub system_additions: Option<String>,
    /// Candidate responses to ask for.
    pub candidates: u32,
}

impl Driver {
    /// The run's planner, for the outermost run of a run that has one.
    pub fn for_run(turn: &Turn<'_>) -> Option<Self> {
        let setup = turn.config.planner.clone()?;
        turn.scope.agent.is_none().then_some(Self {
            setup,
            failed: false,
            revisions: 0,
        })
    }

    /// Asks the planner how to run the coming call, and applies what stays
    /// (user messages, a todo list, what its completions cost).
    pub async fn shape(&mut self, turn: &mut Turn<'_>, tools: &[ToolDefinition]) -> Shaping {
        if self.failed {
            return Shaping::default();
        }
        let ctx = think_context(turn.state, &self.setup, tools);
        let planner = self.setup.planner.clone();
        let (answer, usage, cost) = planner_call(turn, |call| planner.plan(call, &ctx)).await;
        let plan = match answer.and_then(|plan| checked(plan, self.setup.max_candidates)) {
            Ok(plan) => plan,
            Err(reason) => {
                self.failed(turn, ("plan", None), reason, (usage, cost));
                return Shaping::default();
            }
        };
        for text in &plan.injected {
            let message = Message {
                role: Role::User,
                content: vec![Block::Text { text: text.clone() }],
            };
            turn.commit(Entry::User { message });
        }
        let todos = plan
            .todos
            .as_ref()
            .and_then(|todos| todos.as_array().cloned());
        commit_work(turn, usage, cost, todos.clone());
        if let Some(todos) = todos {
            turn.observer.on_event(&Event::Todos { todos });
        }
        if !plan.is_plain() {
            let detail = format!(
                "{} system addition(s), {} message(s), {} candidate(s)",
                plan.system_additions.len(),
                plan.injected.len(),
                plan.candidates.max(1)
            );
            self.event(turn, "plan", "shaped", Some(detail), None);
        }
        Shaping {
            system_additions: (!plan.system_additions.is_empty())
                .then(|| plan.system_additions.join("\n\n")),
            candidates: plan.candidates.max(1),
        }
    }

    /// Has the planner pick one of `answers` (the first when it fails);
    /// the others' cost stays in the run.
    pub async fn select(
        &mut self,
        turn: &mut Turn<'_>,
        mut answers: Vec<(Response, f64)>,
        tools: &[ToolDefinition],
    ) -> (Response, f64) {
        let messages: Vec<serde_json::Value> = answers
            .iter()
            .map(|(response, _)| {
                serde_json::to_value(Message {
                    role: Role::Assistant,
                    content: response.content.clone(),
                })
                .unwrap_or_default()
            })
            .collect();
        let ctx = think_context(turn.state, &self.setup, tools);
        let planner = self.setup.planner.clone();
        let (answer, mut usage, mut cost) =
            planner_call(turn, |call| planner.select(call, &ctx, &messages)).await;
        let asked = Some(answers.len() as u32);
        let picked = match answer {
            Ok(index) if (index as usize) < answers.len() => Ok(index as usize),
            Ok(index) => Err(format!("chose candidate {index} of {}", answers.len())),
            Err(reason) => Err(reason),
        };
        let chosen = match picked {
            Ok(index) => {
                let detail = format!("candidate {index} of {}", answers.len());
                self.event(turn, "select", "chosen", Some(detail), asked);
                index
            }
            Err(reason) => {
                // Its completions' cost is committed below with the
                // candidates'.
                let none = (Usage::default(), 0.0);
                self.failed(turn, ("select", asked), reason, none);
                0
            }
        };
        let (response, chosen_cost) = answers.swap_remove(chosen);
        for (other, other_cost) in &answers {
            usage.add(&other.usage);
            cost += other_cost;
        }
        commit_work(turn, usage, cost, None);
        (response, chosen_cost)
    }

    /// Asks the planner about a final answer; true when it asked for a
    /// revision that the bound allows (its message is then the next user
    /// message).
    pub async fn revise(
        &mut self,
        turn: &mut Turn<'_>,
        tools: &[ToolDefinition],
        answer: &str,
    ) -> bool {
        if self.failed {
            return false;
        }
        let ctx = think_context(turn.state, &self.setup, tools);
        let planner = self.setup.planner.clone();
        let (verdict, usage, cost) =
            planner_call(turn, |call| planner.verify(call, &ctx, answer)).await;
        let verdict = match verdict {
            Ok(verdict) => verdict,
            Err(reason) => {
                self.failed(turn, ("verify", None), reason, (usage, cost));
                return false;
            }
        };
        commit_work(turn, usage, cost, None);
        match verdict {
            Verdict::Accept => {
                self.event(turn, "verify", "accepted", None, None);
                false
            }
            Verdict::Revise(text) if self.revisions < self.setup.max_revisions => {
                self.revisions += 1;
                let detail = format!(
                    "revision {} of {}",
                    self.revisions, self.setup.max_revisions
                );
                self.event(turn, "verify", "revise", Some(detail), None);
                let message = Message {
                    role: Role::User,
                    content: vec![Block::Text { text }],
                };
                turn.commit(Entry::User { message });
                true
            }
            Verdict::Revise(_) => {
                let detail = format!(
                    "asked for more than its {} revision(s); the answer stands",
                    self.setup.max_revisions
                );
                self.event(turn, "verify", "bounded", Some(detail), None);
                false
            }
        }
    }

    fn event(
        &self,
        turn: &Turn<'_>,
        stage: &str,
        outcome: &str,
        detail: Option<String>,
        candidates: Option<u32>,
    ) {
        turn.observer.on_event(&Event::Planner {
            planner: self.setup.planner.name().to_string(),
            stage: stage.into(),
            outcome: outcome.into(),
            detail,
            candidates,
        });
    }

    /// Reports a failed planner call and switches the planner off; what
    /// its completions spent before it failed stays in the run.
    fn failed(
        &mut self,
        turn: &mut Turn<'_>,
        (stage, candidates): (&str, Option<u32>),
        reason: String,
        (usage, cost): (Usage, f64),
    ) {
        commit_work(turn, usage, cost, None);
        self.failed = true;
        let detail = format!("{reason}; the run goes on without the planner");
        self.event(turn, stage, "failed", Some(detail), candidates);
    }
}

/// Runs one planner call, serving the completions it asks for; its
/// answer and what they spent.
async fn planner_call<'f, T, F>(
    turn: &Turn<'_>,
    call: impl FnOnce(PlannerCall) -> F,
) -> (Result<T, String>, Usage, f64)
where
    F: Future<Output = Result<T, String>> + 'f,
{
    let notes = Arc::new(SessionNotes::new(Notes {
        files: turn.state.read_files.clone(),
        todos: turn.state.todos.clone(),
        active_skill: turn.state.active_skill.clone(),
    }));
    with_completions(turn, |completions| call(PlannerCall { completions, notes })).await
}

/// Keeps the planner's work around a call: what it spent (its
/// completions, candidates not chosen) and the todo list it set, if
/// either.
fn commit_work(
    turn: &mut Turn<'_>,
    usage: Usage,
    cost: f64,
    todos: Option<Vec<serde_json::Value>>,
) {
    if cost > 0.0 || usage != Usage::default() || todos.is_some() {
        turn.commit(Entry::Planner {
            usage,
            cost_usd: cost,
            todos,
        });
    }
}

/// What the planner sees now.
fn think_context(
    state: &SessionState,
    setup: &PlannerSetup,
    tools: &[ToolDefinition],
) -> ThinkContext {
    // After a compaction, the task its summary repeats.
    let task = crate::stages::summary::task_of(&state.messages);
    ThinkContext {
        session_id: state.session_id.clone(),
        cycle: state.cycles + 1,
        task,
        transcript: serde_json::to_value(&state.messages).unwrap_or_default(),
        tools: tools.iter().map(|tool| tool.name.clone()).collect(),
        settings: setup.settings.clone(),
    }
}

/// The plan, or why it cannot be followed.
fn checked(mut plan: ThinkPlan, max_candidates: u32) -> Result<ThinkPlan, String> {
    if let Some(todos) = &plan.todos {
        let items = todos
            .as_array()
            .ok_or("returned a todo list that is not a JSON array")?;
        if items.iter().any(|item| !item.is_object()) {
            return Err("returned a todo list whose items are not all objects".into());
        }
    }
    plan.candidates = plan.candidates.min(max_candidates.max(1));
    Ok(plan)
}
