//! What a run shares with the run that started it: the deadline, the
//! budget's spending, and where each model call's cost is counted (the
//! session's totals, a sub-agent's parent step, the tool call that asked
//! for it).

use crate::plugin_llm::PluginSpending;
use crate::step_executor::Charged;
use kaizen_llm::Usage;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

#[cfg(test)]
mod tests {
    use super::*;

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
