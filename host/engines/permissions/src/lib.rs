//! Permissions: for each tool call, the rules (Claude Code's syntax, from
//! every settings source) and the mode give a verdict (allow, ask, deny)
//! before hooks and the user have their say. Deny beats ask beats allow,
//! whatever the source.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod path_pattern;
mod policy;
pub mod rules;
mod shell_words;
mod text_pattern;

pub use policy::{DeniedPaths, Grounds, Permissions, Verdict, always_rule, facts_of};
pub use rules::{CallFacts, Effect, Rule, RuleError, RuleOrigin, RuleSet, Subject};
