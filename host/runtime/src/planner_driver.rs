//! Drives a run's planner around its THINK steps: `plan` before each model
//! call (system additions for that call, user messages and a todo list
//! that stay, several candidate responses), `select` among candidates, and
//! `verify` on a final answer, with revisions bounded. A planner never ends
//! a run. One that fails (a trap, its time limit, a bad answer) is
//! reported and switched off: the run goes on as plain ReAct. Sub-agents
//! run without the planner.

use crate::agent::{Agent, Ending};
use crate::journal::Entry;
use crate::state::SessionState;
use crate::sub_agent::Scope;
use kaizen_llm::{Block, Message, Response, Role, ToolDefinition, Usage};
use kaizen_planning::{Planner, PlannerCall, ThinkContext, ThinkPlan, Verdict};
use kaizen_protocol::Event;
use kaizen_tools::{Notes, SessionNotes};
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Revisions a run's planner may ask for unless the config says otherwise.
pub const DEFAULT_MAX_REVISIONS: u32 = 2;
/// Candidate responses per THINK a planner may ask for unless the config
/// says otherwise.
pub const DEFAULT_MAX_CANDIDATES: u32 = 5;

/// A run's planner and its bounds.
#[derive(Clone)]
pub struct PlannerSetup {
    /// The planner.
    pub planner: Arc<dyn Planner>,
    /// Its settings from the config (a JSON object).
    pub settings: serde_json::Value,
    /// Most revisions `verify` may get in one run.
    pub max_revisions: u32,
    /// Most candidate responses per THINK.
    pub max_candidates: u32,
}

impl PlannerSetup {
    /// `planner` with no settings and the default bounds.
    pub fn new(planner: Arc<dyn Planner>) -> Self {
        Self {
            planner,
            settings: serde_json::json!({}),
            max_revisions: DEFAULT_MAX_REVISIONS,
            max_candidates: DEFAULT_MAX_CANDIDATES,
        }
    }
}

impl fmt::Debug for PlannerSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlannerSetup")
            .field("planner", &self.planner.name())
            .field("settings", &self.settings)
            .field("max_revisions", &self.max_revisions)
            .field("max_candidates", &self.max_candidates)
            .finish()
    }
}

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

impl Agent<'_> {
    /// The run's planner, for the outermost run of a run that has one.
    pub(crate) fn planner_driver(&self, scope: &Scope) -> Option<Driver> {
        let setup = self.config.planner.clone()?;
        scope.agent.is_none().then_some(Driver {
            setup,
            failed: false,
            revisions: 0,
        })
    }

    /// Asks the planner how to run the coming call, and applies what stays
    /// (user messages, a todo list, what its completions cost).
    pub(crate) async fn before_think(
        &self,
        state: &mut SessionState,
        driver: &mut Option<Driver>,
        tools: &[ToolDefinition],
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Shaping {
        let Some(driver) = driver.as_mut().filter(|d| !d.failed) else {
            return Shaping::default();
        };
        let ctx = think_context(state, &driver.setup, tools);
        let planner = driver.setup.planner.clone();
        let (answer, usage, cost) = self
            .planner_call(state, scope, interrupt, |call| planner.plan(call, &ctx))
            .await;
        let plan = match answer.and_then(|plan| checked(plan, driver.setup.max_candidates)) {
            Ok(plan) => plan,
            Err(reason) => {
                self.planner_failed(state, driver, ("plan", None), reason, (usage, cost));
                return Shaping::default();
            }
        };
        for text in &plan.injected {
            let message = Message {
                role: Role::User,
                content: vec![Block::Text { text: text.clone() }],
            };
            self.commit(state, Entry::User { message });
        }
        let todos = plan
            .todos
            .as_ref()
            .and_then(|todos| todos.as_array().cloned());
        self.commit_planner_work(state, usage, cost, todos.clone());
        if let Some(todos) = todos {
            self.observer.on_event(&Event::Todos { todos });
        }
        if !plan.is_plain() {
            let detail = format!(
                "{} system addition(s), {} message(s), {} candidate(s)",
                plan.system_additions.len(),
                plan.injected.len(),
                plan.candidates.max(1)
            );
            self.planner_event(driver, "plan", "shaped", Some(detail), None);
        }
        Shaping {
            system_additions: (!plan.system_additions.is_empty())
                .then(|| plan.system_additions.join("\n\n")),
            candidates: plan.candidates.max(1),
        }
    }

    /// THINK as the planner shaped it: one call, or several candidates of
    /// which the planner picks one (the others' cost stays in the run).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn think_shaped(
        &self,
        state: &mut SessionState,
        system: &str,
        tools: &mut Vec<ToolDefinition>,
        shaping: &Shaping,
        driver: &mut Option<Driver>,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Result<(Response, f64), Ending> {
        let system: Cow<str> = match &shaping.system_additions {
            Some(more) => Cow::Owned(format!("{system}\n\n{more}")),
            None => Cow::Borrowed(system),
        };
        let Some(driver) = driver.as_mut().filter(|_| shaping.candidates > 1) else {
            return self.think(state, &system, tools, scope, interrupt).await;
        };
        let mut answers = self
            .think_candidates(state, &system, tools, shaping.candidates, scope, interrupt)
            .await?;
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
        let ctx = think_context(state, &driver.setup, tools);
        let planner = driver.setup.planner.clone();
        let (answer, mut usage, mut cost) = self
            .planner_call(state, scope, interrupt, |call| {
                planner.select(call, &ctx, &messages)
            })
            .await;
        let asked = Some(answers.len() as u32);
        let picked = match answer {
            Ok(index) if (index as usize) < answers.len() => Ok(index as usize),
            Ok(index) => Err(format!("chose candidate {index} of {}", answers.len())),
            Err(reason) => Err(reason),
        };
        let chosen = match picked {
            Ok(index) => {
                let detail = format!("candidate {index} of {}", answers.len());
                self.planner_event(driver, "select", "chosen", Some(detail), asked);
                index
            }
            Err(reason) => {
                // Its completions' cost is committed below with the
                // candidates'.
                let none = (Usage::default(), 0.0);
                self.planner_failed(state, driver, ("select", asked), reason, none);
                0
            }
        };
        let (response, chosen_cost) = answers.swap_remove(chosen);
        for (other, other_cost) in &answers {
            usage.add(&other.usage);
            cost += other_cost;
        }
        self.commit_planner_work(state, usage, cost, None);
        // The candidates were not streamed: the chosen one's text is shown
        // now.
        let text = response.text();
        if !text.is_empty() {
            self.observer.on_event(&Event::TextDelta { text });
        }
        Ok((response, chosen_cost))
    }

    /// Asks the planner about a final answer; true when it asked for a
    /// revision that the bound allows (its message is then the next user
    /// message).
    pub(crate) async fn revise(
        &self,
        state: &mut SessionState,
        driver: &mut Option<Driver>,
        tools: &[ToolDefinition],
        answer: &str,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> bool {
        let Some(driver) = driver.as_mut().filter(|d| !d.failed) else {
            return false;
        };
        let ctx = think_context(state, &driver.setup, tools);
        let planner = driver.setup.planner.clone();
        let (verdict, usage, cost) = self
            .planner_call(state, scope, interrupt, |call| {
                planner.verify(call, &ctx, answer)
            })
            .await;
        let verdict = match verdict {
            Ok(verdict) => verdict,
            Err(reason) => {
                self.planner_failed(state, driver, ("verify", None), reason, (usage, cost));
                return false;
            }
        };
        self.commit_planner_work(state, usage, cost, None);
        match verdict {
            Verdict::Accept => {
                self.planner_event(driver, "verify", "accepted", None, None);
                false
            }
            Verdict::Revise(text) if driver.revisions < driver.setup.max_revisions => {
                driver.revisions += 1;
                let detail = format!(
                    "revision {} of {}",
                    driver.revisions, driver.setup.max_revisions
                );
                self.planner_event(driver, "verify", "revise", Some(detail), None);
                let message = Message {
                    role: Role::User,
                    content: vec![Block::Text { text }],
                };
                self.commit(state, Entry::User { message });
                true
            }
            Verdict::Revise(_) => {
                let detail = format!(
                    "asked for more than its {} revision(s); the answer stands",
                    driver.setup.max_revisions
                );
                self.planner_event(driver, "verify", "bounded", Some(detail), None);
                false
            }
        }
    }

    /// Runs one planner call, serving the completions it asks for; its
    /// answer and what they spent.
    async fn planner_call<'f, T, F>(
        &self,
        state: &SessionState,
        scope: &Scope,
        interrupt: &CancellationToken,
        call: impl FnOnce(PlannerCall) -> F,
    ) -> (Result<T, String>, Usage, f64)
    where
        F: Future<Output = Result<T, String>> + 'f,
    {
        let notes = Arc::new(SessionNotes::new(Notes {
            files: state.read_files.clone(),
            todos: state.todos.clone(),
        }));
        self.with_completions(state, scope, interrupt, |completions| {
            call(PlannerCall { completions, notes })
        })
        .await
    }

    /// Keeps the planner's work around a call: what it spent (its
    /// completions, candidates not chosen) and the todo list it set, if
    /// either.
    fn commit_planner_work(
        &self,
        state: &mut SessionState,
        usage: Usage,
        cost: f64,
        todos: Option<Vec<serde_json::Value>>,
    ) {
        if cost > 0.0 || usage != Usage::default() || todos.is_some() {
            let entry = Entry::Planner {
                usage,
                cost_usd: cost,
                todos,
            };
            self.commit(state, entry);
        }
    }

    fn planner_event(
        &self,
        driver: &Driver,
        stage: &str,
        outcome: &str,
        detail: Option<String>,
        candidates: Option<u32>,
    ) {
        self.observer.on_event(&Event::Planner {
            planner: driver.setup.planner.name().to_string(),
            stage: stage.into(),
            outcome: outcome.into(),
            detail,
            candidates,
        });
    }

    /// Reports a failed planner call and switches the planner off; what
    /// its completions spent before it failed stays in the run.
    fn planner_failed(
        &self,
        state: &mut SessionState,
        driver: &mut Driver,
        (stage, candidates): (&str, Option<u32>),
        reason: String,
        (usage, cost): (Usage, f64),
    ) {
        self.commit_planner_work(state, usage, cost, None);
        driver.failed = true;
        let detail = format!("{reason}; the run goes on without the planner");
        self.planner_event(driver, stage, "failed", Some(detail), candidates);
    }
}

/// What the planner sees now.
fn think_context(
    state: &SessionState,
    setup: &PlannerSetup,
    tools: &[ToolDefinition],
) -> ThinkContext {
    // After a compaction, the task its summary repeats.
    let task = crate::compaction::task_of(&state.messages);
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
