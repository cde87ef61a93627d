//! The operator's caps on plugins' completions (the contract's `llm`):
//! the model roles each plugin may ask for, its share of the run's
//! budget and its most calls, and the accounting that holds a plugin to
//! them while its completions run at once.

use kaizen_tools::{CompletionError, MODEL_ROLES};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// The share of the run's budget one plugin's completions may spend
/// unless the operator says otherwise.
pub const DEFAULT_BUDGET_SHARE: f64 = 0.25;

/// How many completions one plugin may ask for in a run unless the
/// operator says otherwise: a bound that holds when a model has no price
/// (its calls cost nothing by the price table, and no budget stops them).
pub const DEFAULT_MAX_CALLS: u32 = 100;

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
pub(crate) enum Refusal {
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
    pub(crate) fn reserve(
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
    pub(crate) fn settle(&self, plugin: &str, most: f64, cost: f64) {
        let mut accounts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let account = accounts.entry(plugin.to_string()).or_default();
        account.reserved = (account.reserved - most).max(0.0);
        account.spent += cost;
    }
}

/// Refuses an unknown role, or one the operator did not grant `caller`.
pub(crate) fn check_role(
    caller: &str,
    role: &str,
    caps: &PluginLlmCaps,
) -> Result<(), CompletionError> {
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
        assert!(check_role("p", "evaluator", &all).is_ok());
        let err = check_role("p", "oracle", &all).unwrap_err();
        assert!(
            err.to_string().contains("main, planner, evaluator"),
            "{err}"
        );
        let some = PluginLlmCaps {
            roles: Some(vec!["planner".into()]),
            ..PluginLlmCaps::default()
        };
        assert!(check_role("p", "planner", &some).is_ok());
        let err = check_role("p", "main", &some).unwrap_err();
        assert!(
            err.to_string()
                .contains("plugin `p` may use the model roles planner, not `main`"),
            "{err}"
        );
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
