//! Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`,
//! each allowing, asking for or denying the calls it matches.
//!
//! What a specifier means depends on what the call exposes ([`Subject`]),
//! which the tool declares: a shell command (`Bash(npm run test:*)`), a path
//! (`Read(./.env)`, `Edit(/src/**)`), a URL (`WebFetch(domain:example.com)`)
//! or a name (`Task(Explore)`). Only `Read` and `Edit` are known here, as the
//! path-rule families Claude Code's syntax gives them.
//!
//! Where Claude Code's documentation leaves a choice:
//! - `WebFetch(domain:example.com)` matches the host `example.com` only, not
//!   its subdomains (Claude Code compares the host exactly); write
//!   `domain:*.example.com` for every subdomain (not the apex itself), and
//!   `domain:*` for any host. URLs are read with the WHATWG parser the
//!   WebFetch tool itself uses, so `http://example.com@evil.test/` is a
//!   fetch from `evil.test`; the port does not matter.
//! - A `:*` prefix rule on a name (`Skill(plugin:*)`) matches the name and
//!   every name continuing it after `:` or a space.
//! - Path patterns: see the `path_pattern` module (gitignore rules; `/path`
//!   is relative to the rule origin's base).

mod call;
mod rule;
mod rule_set;
mod syntax;

pub use call::{CallFacts, Subject};
pub use rule::{Effect, Rule, RuleError, RuleOrigin};
pub use rule_set::{Decision, RuleSet};

#[cfg(test)]
mod tests;
