//! Sub-agents: a tool call (such as `Task`) hands a task to a fresh loop
//! with its own conversation and a subset of the session's tools. The step
//! that runs the call serves the request, so the sub-agent shares the
//! parent's provider, budget, deadline and interrupt; its spending counts
//! against the parent's budget as it happens, and its final message is the
//! tool's result. A sub-agent cannot start sub-agents of its own.

use crate::agent::Agent;
use crate::completions::{self, PluginSpending};
use crate::hook_points::HookSite;
use crate::journal::{Journal, ParentFiles};
use crate::state::SessionState;
use crate::steps::Charged;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use kaizen_hooks::{HookAction, HookEvent};
use kaizen_llm::Usage;
use kaizen_protocol::{Event, Observer};
use kaizen_tools::{
    SubAgentFuture, SubAgentLink, SubAgentReport, SubAgentRequest, SubAgents, ToolSpec,
};
use serde_json::json;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The name Claude Code gives the tool that starts sub-agents; a
/// sub-agent is never offered it.
pub const TASK_TOOL: &str = "Task";

/// The kinds of sub-agent, by the `subagent_type` a tool names.
const KINDS: &[Kind] = &[
    Kind {
        name: "general-purpose",
        read_only: false,
        instructions: "You are a sub-agent: another agent gave you the task below and will see \
            only your final message. Do the task completely with the tools you have, then end \
            with a self-contained report of what you did and found (paths, names, numbers), \
            since nobody sees your intermediate steps.",
    },
    Kind {
        name: "Explore",
        read_only: true,
        instructions: "You are a read-only exploration sub-agent: another agent gave you the \
            task below and will see only your final message. Search and read to answer it; you \
            cannot change files. End with a self-contained answer: the relevant paths, line \
            numbers and findings, since nobody sees your intermediate steps.",
    },
];

/// One kind of sub-agent.
struct Kind {
    name: &'static str,
    /// Offer only tools that never change anything.
    read_only: bool,
    /// Added to the system prompt.
    instructions: &'static str,
}

impl Kind {
    fn named(name: &str) -> Result<&'static Kind, String> {
        KINDS.iter().find(|kind| kind.name == name).ok_or_else(|| {
            let known: Vec<&str> = KINDS.iter().map(|kind| kind.name).collect();
            format!(
                "there is no sub-agent type `{name}`; use one of: {}",
                known.join(", ")
            )
        })
    }

    fn offers(&self, spec: &ToolSpec) -> bool {
        spec.name != TASK_TOOL && (spec.read_only || !self.read_only)
    }
}

/// Model spending: tokens and USD.
#[derive(Debug, Default)]
pub(crate) struct Meter(Mutex<(Usage, f64)>);

impl Meter {
    pub fn add(&self, usage: &Usage, cost: f64) {
        let mut spent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        spent.0.add(usage);
        spent.1 += cost;
    }

    pub fn cost(&self) -> f64 {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).1
    }

    /// What was added since the last take, leaving the meter at zero.
    pub fn take(&self) -> (Usage, f64) {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// What a run shares with the run that started it.
#[derive(Clone)]
pub(crate) struct Scope {
    /// When the outermost run must end.
    pub deadline: Option<Instant>,
    /// Everything the outermost run and its sub-agents spent; the budget
    /// is checked against it.
    pub spent: Arc<Meter>,
    /// A sub-agent's spending, for its parent's session totals.
    pub tally: Option<Arc<Meter>>,
    /// Whether tool calls may start sub-agents.
    pub may_delegate: bool,
    /// In a sub-agent's run: the id (its parent's tool call) and type
    /// hooks see.
    pub agent: Option<(String, String)>,
    /// What each plugin's completions spent, against its share of the
    /// budget.
    pub plugins: Arc<PluginSpending>,
    /// In a step's tool calls: what each call spent, by its id (a
    /// sub-agent's spending counts for the call that started it).
    pub calls: Option<Arc<CallMeters>>,
}

/// Model spending by tool call.
#[derive(Debug, Default)]
pub(crate) struct CallMeters(Mutex<HashMap<String, Charged>>);

impl CallMeters {
    fn add(&self, call: &str, usage: &Usage, cost: f64) {
        let mut calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let charged = calls.entry(call.to_string()).or_default();
        charged.usage.add(usage);
        charged.cost_usd += cost;
    }

    fn get(&self, call: &str) -> Charged {
        let calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        calls.get(call).copied().unwrap_or_default()
    }
}

impl Scope {
    /// The scope of a run started from outside.
    pub fn outermost(deadline: Option<Instant>) -> Self {
        Self {
            deadline,
            spent: Arc::default(),
            tally: None,
            may_delegate: true,
            agent: None,
            plugins: Arc::default(),
            calls: None,
        }
    }

    /// Counts one model call (in a sub-agent, for the call that started
    /// it).
    pub fn charge(&self, usage: &Usage, cost: f64) {
        self.charge_call(None, usage, cost);
    }

    /// Counts one model call made for the tool call `call` (a plugin's
    /// completion).
    pub fn charge_call(&self, call: Option<&str>, usage: &Usage, cost: f64) {
        self.spent.add(usage, cost);
        if let Some(tally) = &self.tally {
            tally.add(usage, cost);
        }
        let call = self.agent.as_ref().map(|(id, _)| id.as_str()).or(call);
        if let (Some(calls), Some(call)) = (&self.calls, call) {
            calls.add(call, usage, cost);
        }
    }

    /// What the tool call `call` has spent so far in this run.
    pub fn charged_for(&self, call: &str) -> Charged {
        self.calls
            .as_ref()
            .map(|calls| calls.get(call))
            .unwrap_or_default()
    }

    /// Charges what a step handed back by a journal spent when it ran,
    /// beyond what it spent here (nothing, when it ran here).
    pub fn recharge(&self, call: &str, journaled: &Charged) {
        if let Some(missing) = journaled.beyond(&self.charged_for(call)) {
            self.charge_call(Some(call), &missing.usage, missing.cost_usd);
        }
    }
}

/// A request from a tool call, waiting for its sub-agent.
pub(crate) struct Job {
    call_id: String,
    request: SubAgentRequest,
    reply: oneshot::Sender<Result<SubAgentReport, String>>,
}

/// The tools' end of a step's sub-agent channel.
struct Requests(mpsc::UnboundedSender<Job>);

impl SubAgents for Requests {
    fn run(&self, call_id: &str, request: SubAgentRequest) -> SubAgentFuture {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(Job {
            call_id: call_id.to_string(),
            request,
            reply,
        });
        Box::pin(async move {
            let gone = || "the step that ran this call has ended; no sub-agent ran".to_string();
            sent.map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        })
    }
}

/// A link for one step's tool calls and the receiver the step serves.
pub(crate) fn channel() -> (SubAgentLink, mpsc::UnboundedReceiver<Job>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (SubAgentLink::new(Arc::new(Requests(sender))), receiver)
}

/// Reports a sub-agent's events as its parent's, tagged with the call.
struct Nested<'a> {
    parent: &'a dyn Observer,
    call_id: String,
}

impl Observer for Nested<'_> {
    fn on_event(&self, event: &Event) {
        self.parent.on_event(&Event::SubAgent {
            call_id: self.call_id.clone(),
            event: Box::new(event.clone()),
        });
    }
}

impl Agent<'_> {
    /// Drives `calls` to their end while serving the sub-agents and the
    /// completions they ask for, several at once when calls run
    /// concurrently.
    pub(crate) async fn serving_step<T>(
        &self,
        calls: impl Future<Output = T>,
        mut requests: mpsc::UnboundedReceiver<Job>,
        mut completions: mpsc::UnboundedReceiver<completions::Job>,
        parent: &SessionState,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> T {
        let mut calls = std::pin::pin!(calls);
        let mut running = FuturesUnordered::new();
        loop {
            tokio::select! {
                done = &mut calls => return done,
                Some(job) = requests.recv() => {
                    running.push(self.sub_agent(job, parent, scope, interrupt).boxed());
                }
                Some(job) = completions.recv() => {
                    running.push(self.plugin_completion(job, scope, interrupt).boxed());
                }
                Some(()) = running.next(), if !running.is_empty() => {}
            }
        }
    }

    /// Runs one sub-agent and answers its caller.
    async fn sub_agent(
        &self,
        job: Job,
        parent: &SessionState,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) {
        let kind = match Kind::named(&job.request.subagent_type) {
            Ok(kind) => kind,
            Err(err) => {
                let _ = job.reply.send(Err(err));
                return;
            }
        };
        let tools = self.tools.subset(|spec| kind.offers(spec));
        let observer = Nested {
            parent: self.observer,
            call_id: job.call_id.clone(),
        };
        let mut config = self.config.clone();
        config.model = self
            .config
            .models
            .sub_agent_model(&job.request.subagent_type, &self.config.model)
            .to_string();
        // Messages from outside are the parent's.
        config.inbox = None;
        config.instructions = Some(match &self.config.instructions {
            Some(own) => format!("{own}\n\n{}", kind.instructions),
            None => kind.instructions.to_string(),
        });
        let agent = Agent {
            provider: self.provider,
            tools: &tools,
            pricing: self.pricing,
            config,
            observer: &observer,
            journal: self.journal.as_ref().map(|journal| {
                Arc::new(ParentFiles(self.step_files(journal, parent))) as Arc<dyn Journal>
            }),
            guard: self.guard.clone(),
        };
        let mut state = SessionState::new(
            format!("{}/{}", parent.session_id, job.call_id),
            &self.config.model,
        );
        let kind_name = job.request.subagent_type.clone();
        let scope = Scope {
            may_delegate: false,
            agent: Some((job.call_id.clone(), kind_name.clone())),
            ..scope.clone()
        };
        let base = agent.payload_base(&state, &scope);
        let fields = json!({"prompt": job.request.prompt, "description": job.request.description});
        let site = HookSite {
            base: &base,
            scope: &scope,
            interrupt,
        };
        let hooks = agent
            .hook(
                &mut state,
                site,
                HookEvent::SubagentStart,
                Some(&kind_name),
                fields,
            )
            .await;
        if let HookAction::Stop(reason) | HookAction::Deny(reason) = &hooks.action {
            let by = hooks.decided_by.as_deref().unwrap_or("a hook");
            let _ = job.reply.send(Err(format!(
                "the sub-agent was not started: the hook {by} refused it: {reason}"
            )));
            return;
        }
        let result = agent
            .run_in(&mut state, Some(&job.request.prompt), interrupt, &scope)
            .await;
        let _ = job.reply.send(Ok(SubAgentReport {
            output: result.output,
            status: result.status.as_str().to_string(),
            error: result.error_message,
            cycles: result.cycles_used,
            cost_usd: result.cost_usd,
            tool_calls: result.tool_calls.len() as u32,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_tools::Danger;

    fn spec(name: &str, read_only: bool) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            danger: Danger::Safe,
            read_only,
        }
    }

    #[test]
    fn kinds_choose_their_tools_and_never_offer_task() {
        let general = Kind::named("general-purpose").unwrap();
        let explore = Kind::named("Explore").unwrap();
        assert!(general.offers(&spec("Write", false)));
        assert!(!explore.offers(&spec("Write", false)));
        assert!(explore.offers(&spec("Read", true)));
        assert!(!general.offers(&spec(TASK_TOOL, true)));
        let err = Kind::named("wizard").err().unwrap();
        assert!(err.contains("general-purpose, Explore"), "{err}");
    }

    #[test]
    fn a_meter_adds_and_takes() {
        let meter = Meter::default();
        let usage = Usage {
            input_tokens: 3,
            output_tokens: 2,
            ..Usage::default()
        };
        meter.add(&usage, 0.5);
        meter.add(&usage, 0.25);
        assert_eq!(meter.cost(), 0.75);
        let (taken, cost) = meter.take();
        assert_eq!((taken.input_tokens, cost), (6, 0.75));
        assert_eq!(meter.cost(), 0.0);
    }
}
