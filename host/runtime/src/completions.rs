//! Plugins' completions (the contract's `llm`): a tool call asks for one by
//! model role, and the step that runs the call serves it through the
//! session's provider, so it shares the session's budget, deadline and
//! interrupt. The operator's [`PluginLlmPolicy`] caps the roles each plugin
//! may use and its share of the run's budget; [`ModelRoles`] says which
//! model plays each role.

use crate::agent::Agent;
use crate::bounded::{Cut, bounded};
use crate::state::SessionState;
use crate::sub_agent::{self, Meter, Scope};
use kaizen_llm::{Block, Message, Request, Role, StreamEvent, Usage};
use kaizen_protocol::Event;
use kaizen_tools::{
    Completion, CompletionError, CompletionFuture, CompletionLink, CompletionRequest, Completions,
    MODEL_ROLES,
};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The share of the run's budget one plugin's completions may spend
/// unless the operator says otherwise.
pub const DEFAULT_BUDGET_SHARE: f64 = 0.25;

/// How many completions one plugin may ask for in a run unless the
/// operator says otherwise: a bound that holds when a model has no price
/// (its calls cost nothing by the price table, and no budget stops them).
pub const DEFAULT_MAX_CALLS: u32 = 100;

/// Which model plays each role; a role without one is played by the
/// session's model. Sub-agents may have a model by type, over the
/// `sub-agent` role's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRoles {
    /// By role.
    pub roles: BTreeMap<String, String>,
    /// By sub-agent type (`Explore`, `general-purpose`).
    pub sub_agents: BTreeMap<String, String>,
}

impl ModelRoles {
    /// The model for `role`, or `main_model`.
    pub fn model_for<'a>(&'a self, role: &str, main_model: &'a str) -> &'a str {
        self.roles.get(role).map_or(main_model, String::as_str)
    }

    /// The model a sub-agent of type `kind` runs on.
    pub fn sub_agent_model<'a>(&'a self, kind: &str, main_model: &'a str) -> &'a str {
        match self.sub_agents.get(kind) {
            Some(model) => model,
            None => self.model_for("sub-agent", main_model),
        }
    }
}

/// What one plugin's completions may do.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginLlmCaps {
    /// The roles it may ask for; `None` means every role.
    pub roles: Option<Vec<String>>,
    /// The fraction of the run's budget its completions may spend.
    pub budget_share: f64,
    /// How many completions it may ask for in a run.
    pub max_calls: u32,
}

impl Default for PluginLlmCaps {
    fn default() -> Self {
        Self {
            roles: None,
            budget_share: DEFAULT_BUDGET_SHARE,
            max_calls: DEFAULT_MAX_CALLS,
        }
    }
}

/// The operator's caps on plugins' completions: defaults, and per plugin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PluginLlmPolicy {
    /// For plugins without caps of their own.
    pub default: PluginLlmCaps,
    /// By plugin name.
    pub plugins: BTreeMap<String, PluginLlmCaps>,
}

impl PluginLlmPolicy {
    /// The caps of plugin `name`.
    pub fn caps_for(&self, name: &str) -> &PluginLlmCaps {
        self.plugins.get(name).unwrap_or(&self.default)
    }
}

/// What each plugin's completions spent in a run (USD), what its calls in
/// flight may still spend at most (reserved before each call, so that
/// calls at once cannot each pass a check the others will break), and how
/// many it asked for.
#[derive(Debug, Default)]
pub(crate) struct PluginSpending(Mutex<HashMap<String, Account>>);

/// One plugin's completions in a run.
#[derive(Debug, Default, Clone, Copy)]
struct Account {
    spent: f64,
    reserved: f64,
    calls: u32,
}

/// Why a reservation was refused.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// The plugin made its most calls.
    Calls(u32),
    /// The call could take the plugin past its share: what it spent and
    /// holds.
    Share(f64),
    /// The call could take the run past its budget: what plugins hold.
    Budget(f64),
}

impl PluginSpending {
    #[cfg(test)]
    fn spent(&self, plugin: &str) -> f64 {
        let accounts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        accounts.get(plugin).map_or(0.0, |a| a.spent)
    }

    /// Holds `most` (the call's cost at worst) for one more call of
    /// `plugin`, if that stays within its `share`, the run's `budget`
    /// (of which `run_spent` is gone) and its `max_calls`.
    fn reserve(
        &self,
        plugin: &str,
        most: f64,
        share: f64,
        budget: f64,
        run_spent: f64,
        max_calls: u32,
    ) -> Result<(), Refusal> {
        let mut accounts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let held: f64 = accounts.values().map(|a| a.reserved).sum();
        let account = accounts.entry(plugin.to_string()).or_default();
        if account.calls >= max_calls {
            return Err(Refusal::Calls(account.calls));
        }
        let own = account.spent + account.reserved;
        if own + most > share {
            return Err(Refusal::Share(own));
        }
        if run_spent + held + most > budget {
            return Err(Refusal::Budget(held));
        }
        account.calls += 1;
        account.reserved += most;
        Ok(())
    }

    /// Lets go of a reservation of `most`, charging what the call `cost`.
    fn settle(&self, plugin: &str, most: f64, cost: f64) {
        let mut accounts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let account = accounts.entry(plugin.to_string()).or_default();
        account.reserved = (account.reserved - most).max(0.0);
        account.spent += cost;
    }
}

/// A completion a tool call asked for, waiting to run.
pub(crate) struct Job {
    caller: String,
    call_id: String,
    request: CompletionRequest,
    reply: oneshot::Sender<Result<Completion, CompletionError>>,
}

/// The tools' end of a step's completion channel.
struct Requests(mpsc::UnboundedSender<Job>);

impl Completions for Requests {
    fn complete(
        &self,
        caller: &str,
        call_id: &str,
        request: CompletionRequest,
    ) -> CompletionFuture {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(Job {
            caller: caller.to_string(),
            call_id: call_id.to_string(),
            request,
            reply,
        });
        Box::pin(async move {
            let gone =
                || CompletionError::Cancelled("the step that ran this call has ended".to_string());
            sent.map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        })
    }
}

/// A link for one step's tool calls and the receiver the step serves.
pub(crate) fn channel() -> (CompletionLink, mpsc::UnboundedReceiver<Job>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (CompletionLink::new(Arc::new(Requests(sender))), receiver)
}

impl Agent<'_> {
    /// Runs `work`, given the link its completions go through, while
    /// serving them within `scope` (outside a step: a planner's call, a
    /// hook on the session's own events); its answer and what they spent.
    pub(crate) async fn with_completions<T, F>(
        &self,
        state: &SessionState,
        scope: &Scope,
        interrupt: &CancellationToken,
        work: impl FnOnce(CompletionLink) -> F,
    ) -> (T, Usage, f64)
    where
        F: Future<Output = T>,
    {
        let (completions, requests) = channel();
        // Outside a step nothing starts sub-agents: this channel stays empty.
        let (_, no_agents) = sub_agent::channel();
        let tally = Arc::new(Meter::default());
        let counted = Scope {
            tally: Some(tally.clone()),
            ..scope.clone()
        };
        let answer = self
            .serving_step(
                work(completions),
                no_agents,
                requests,
                state,
                &counted,
                interrupt,
            )
            .await;
        let (usage, cost) = tally.take();
        (answer, usage, cost)
    }

    /// Runs one plugin's completion and answers its caller.
    pub(crate) async fn plugin_completion(
        &self,
        job: Job,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) {
        let answer = self
            .complete_for(&job.caller, &job.call_id, job.request, scope, interrupt)
            .await;
        let _ = job.reply.send(answer);
    }

    async fn complete_for(
        &self,
        caller: &str,
        call_id: &str,
        request: CompletionRequest,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Result<Completion, CompletionError> {
        let role = request.model_role.clone().unwrap_or_else(|| "main".into());
        let role = role.as_str();
        let caps = self.config.plugin_llm.caps_for(caller);
        admit(caller, role, caps)?;
        let budget = self.config.budget_usd;
        let spent = scope.spent.cost();
        if spent >= budget {
            return Err(CompletionError::BudgetExceeded(format!(
                "the run spent ${spent:.4} of its ${budget:.4} budget"
            )));
        }
        let share = caps.budget_share * budget;
        let model = self.config.models.model_for(role, &self.config.model);
        // What the call costs at worst: its whole prompt (a token per three
        // bytes, more than any tokenizer makes of text) and every output
        // token it may ask for.
        let prompt_bytes: usize = request.system.as_ref().map_or(0, String::len)
            + request
                .messages
                .iter()
                .map(|m| m.content.len())
                .sum::<usize>();
        let max_tokens = request
            .max_tokens
            .unwrap_or(self.config.max_tokens)
            .min(self.config.max_tokens);
        let worst = Usage {
            input_tokens: (prompt_bytes as u64).div_ceil(3),
            output_tokens: u64::from(max_tokens),
            ..Usage::default()
        };
        let most = (self.pricing)(model, &worst);
        let reserved = scope
            .plugins
            .reserve(caller, most, share, budget, spent, caps.max_calls);
        match reserved {
            Ok(()) => {}
            Err(Refusal::Calls(calls)) => {
                return Err(CompletionError::BudgetExceeded(format!(
                    "plugin `{caller}` made {calls} completions, its most in a run (max-calls = {} in [plugin-llm])",
                    caps.max_calls
                )));
            }
            Err(Refusal::Share(own)) => {
                return Err(CompletionError::BudgetExceeded(format!(
                    "plugin `{caller}` spent or holds ${own:.4} on completions; this one (up to ${most:.4}) could take it past its share of the run's budget (${share:.4}, budget-share = {})",
                    caps.budget_share
                )));
            }
            Err(Refusal::Budget(held)) => {
                return Err(CompletionError::BudgetExceeded(format!(
                    "the run spent ${spent:.4} and completions in flight hold ${held:.4} of its ${budget:.4} budget; this one (up to ${most:.4}) could go past it"
                )));
            }
        }
        let answer = self
            .complete_reserved(
                caller, call_id, role, model, request, max_tokens, scope, interrupt,
            )
            .await;
        let cost = answer.as_ref().map_or(0.0, |c| c.cost_usd);
        scope.plugins.settle(caller, most, cost);
        answer
    }

    /// Runs a completion whose cost at worst is reserved.
    #[allow(clippy::too_many_arguments)]
    async fn complete_reserved(
        &self,
        caller: &str,
        call_id: &str,
        role: &str,
        model: &str,
        request: CompletionRequest,
        max_tokens: u32,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Result<Completion, CompletionError> {
        let messages = request
            .messages
            .into_iter()
            .map(|message| Message {
                role: if message.assistant {
                    Role::Assistant
                } else {
                    Role::User
                },
                content: vec![Block::Text {
                    text: message.content,
                }],
            })
            .collect();
        let request = Request {
            model: model.to_string(),
            system: request.system.unwrap_or_default(),
            messages,
            tools: Vec::new(),
            max_tokens,
            temperature: request.temperature,
        };
        // A plugin's completion is not the answer: its text is not
        // streamed, only its cost reported (and a fallback, if any).
        let sink = |event: StreamEvent| {
            if let StreamEvent::FallingBack { from, to, error } = event {
                self.observer.on_event(&Event::Fallback { from, to, error });
            }
        };
        let call = self.provider.complete(&request, &sink);
        let response = match bounded(call, scope.deadline, interrupt).await {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return Err(CompletionError::Provider(err.message)),
            Err(Cut::Timeout) => {
                return Err(CompletionError::Cancelled(
                    "the run's time limit ran out".into(),
                ));
            }
            Err(Cut::Interrupted) => {
                return Err(CompletionError::Cancelled("the run was interrupted".into()));
            }
        };
        let cost = (self.pricing)(&response.model, &response.usage);
        scope.charge_call(Some(call_id), &response.usage, cost);
        self.observer.on_event(&Event::PluginCompletion {
            plugin: caller.to_string(),
            call_id: call_id.to_string(),
            role: role.to_string(),
            model: response.model.clone(),
            input_tokens: response.usage.input_tokens,
            output_tokens: response.usage.output_tokens,
            cost_usd: cost,
        });
        Ok(Completion {
            text: response.text(),
            model: response.model,
            input_tokens: response.usage.input_tokens,
            output_tokens: response.usage.output_tokens,
            cost_usd: cost,
        })
    }
}

/// Refuses an unknown role, or one the operator did not grant `caller`.
fn admit(caller: &str, role: &str, caps: &PluginLlmCaps) -> Result<(), CompletionError> {
    if !MODEL_ROLES.contains(&role) {
        return Err(CompletionError::Refused(format!(
            "there is no model role `{role}`; use one of: {}",
            MODEL_ROLES.join(", ")
        )));
    }
    if let Some(roles) = &caps.roles
        && !roles.iter().any(|granted| granted == role)
    {
        let granted = if roles.is_empty() {
            "none".to_string()
        } else {
            roles.join(", ")
        };
        return Err(CompletionError::Refused(format!(
            "plugin `{caller}` may use the model roles {granted}, not `{role}` (the operator's [plugin-llm] settings)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_checked_against_the_list_and_the_caps() {
        let all = PluginLlmCaps::default();
        assert!(admit("p", "evaluator", &all).is_ok());
        let err = admit("p", "oracle", &all).unwrap_err();
        assert!(
            err.to_string().contains("main, planner, evaluator"),
            "{err}"
        );
        let some = PluginLlmCaps {
            roles: Some(vec!["planner".into()]),
            ..PluginLlmCaps::default()
        };
        assert!(admit("p", "planner", &some).is_ok());
        let err = admit("p", "main", &some).unwrap_err();
        assert!(
            err.to_string()
                .contains("plugin `p` may use the model roles planner, not `main`"),
            "{err}"
        );
    }

    #[test]
    fn a_role_without_a_model_is_played_by_the_main_model() {
        let roles = ModelRoles {
            roles: BTreeMap::from([("evaluator".into(), "small".into())]),
            sub_agents: BTreeMap::from([("Explore".into(), "tiny".into())]),
        };
        assert_eq!(roles.model_for("evaluator", "big"), "small");
        assert_eq!(roles.model_for("planner", "big"), "big");
        assert_eq!(roles.sub_agent_model("Explore", "big"), "tiny");
        assert_eq!(roles.sub_agent_model("general-purpose", "big"), "big");
    }

    #[test]
    fn spending_is_kept_per_plugin_and_calls_reserve_their_worst() {
        let spending = PluginSpending::default();
        // A share of 1.0 of a budget of 2.0, 10 calls at most.
        let reserve =
            |plugin, most, run_spent| spending.reserve(plugin, most, 1.0, 2.0, run_spent, 10);
        assert_eq!(reserve("a", 0.5, 0.0), Ok(()));
        // Two calls at once: the second cannot pass while the first holds.
        assert_eq!(reserve("a", 0.75, 0.0), Err(Refusal::Share(0.5)));
        spending.settle("a", 0.5, 0.25);
        assert_eq!(spending.spent("a"), 0.25);
        assert_eq!(reserve("a", 0.75, 0.0), Ok(()));
        // The run's budget counts what every plugin holds.
        assert_eq!(reserve("b", 0.5, 1.0), Err(Refusal::Budget(0.75)));
        assert_eq!(spending.spent("b"), 0.0);
    }

    #[test]
    fn an_unpriced_model_is_bounded_by_the_call_cap() {
        let spending = PluginSpending::default();
        for _ in 0..3 {
            assert_eq!(spending.reserve("p", 0.0, 0.25, 1.0, 0.0, 3), Ok(()));
            spending.settle("p", 0.0, 0.0);
        }
        assert_eq!(
            spending.reserve("p", 0.0, 0.25, 1.0, 0.0, 3),
            Err(Refusal::Calls(3))
        );
    }
}
