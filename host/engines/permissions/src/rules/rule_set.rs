//! The rules of every source together, and how they decide a call: deny
//! beats ask beats allow.

use std::path::Path;

use super::call::{CallFacts, split_of};
use super::rule::{Effect, Rule, Spec};

/// How the rules decide a call.
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    /// The rule that decides it.
    pub rule: &'a Rule,
    /// Its effect on this call: the rule's own, or `Ask` when the rule
    /// only could apply (`unsure`).
    pub effect: Effect,
    /// The command was not fully analyzed or resolved, and the rule may
    /// apply to what it runs.
    pub unsure: bool,
}

/// Rules from every source.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// An empty set: no rule decides anything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a rule; order does not change decisions.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// The rules, in the order pushed.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// True when the set has no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The deciding rule for a call: deny beats ask beats allow, whatever the
    /// order or the sources (Claude Code's order); None when no rule matches.
    /// A command line is allowed when each of its simple commands is
    /// matched by some allow rule (the one returned is the rule of the first);
    /// a line that cannot be analyzed, or whose commands are not all
    /// resolved, is allowed only by a whole-tool rule, and a deny or ask
    /// rule that what it runs could match makes it ask (`unsure`).
    pub fn decide(&self, call: &CallFacts) -> Option<Decision<'_>> {
        let split = split_of(call);
        let decided = |rule, effect, unsure| Decision {
            rule,
            effect,
            unsure,
        };
        for effect in [Effect::Deny, Effect::Ask] {
            let mut rules = self.rules.iter().filter(|r| r.effect == effect);
            if let Some(rule) = rules.find(|r| r.matches_with(call, &split)) {
                return Some(decided(rule, effect, false));
            }
            let mut rules = self.rules.iter().filter(|r| r.effect == effect);
            if let Some(rule) = rules.find(|r| r.could_match(call, &split)) {
                return Some(decided(rule, Effect::Ask, true));
            }
        }
        let mut rules = self.rules.iter().filter(|r| r.effect == Effect::Allow);
        if let Some(rule) = rules.find(|r| r.matches_with(call, &split)) {
            return Some(decided(rule, Effect::Allow, false));
        }
        let Some(Ok(split)) = &split else {
            return None;
        };
        if split.anything_may_run() {
            return None;
        }
        let mut first = None;
        for part in &split.parts {
            let allowed = self.rules.iter().find(|r| {
                r.effect == Effect::Allow
                    && r.applies_to_tool(call)
                    && matches!(&r.spec, Spec::Text { pattern, .. } if pattern.allows(part))
            })?;
            first.get_or_insert(allowed);
        }
        first.map(|rule| decided(rule, Effect::Allow, false))
    }

    /// The absolute globs of every deny rule on paths (the `Read(…)` and
    /// `Edit(…)` families), for the host to hide; patterns relative to the
    /// working directory are resolved against each rule's origin base. A
    /// path is hidden when it or a directory above it matches a glob.
    pub fn denied_path_globs(&self) -> Vec<String> {
        self.denied_globs(Rule::path_glob)
    }

    /// [`RuleSet::denied_path_globs`] for a session whose working directory
    /// is `cwd`.
    pub fn denied_path_globs_in(&self, cwd: &Path) -> Vec<String> {
        self.denied_globs(|r| r.path_glob_in(cwd))
    }

    fn denied_globs(&self, glob: impl Fn(&Rule) -> Option<String>) -> Vec<String> {
        let denies = self.rules.iter().filter(|r| r.effect == Effect::Deny);
        denies.filter_map(glob).collect()
    }
}
