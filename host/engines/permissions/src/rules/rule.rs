//! One permission rule: what it does, where it came from, and what it
//! matches.

use std::path::{Path, PathBuf};

use super::call::{CallFacts, Subject, split_of};
use super::syntax::{DANGER_PREFIX, Tools, parse_danger, parse_tool, split_rule};
use crate::path_pattern::PathPattern;
use crate::shell_words::{self, Split, Unanalyzable};
use crate::text_pattern::{TextPattern, parse_domain, url_host};
use kaizen_protocol::Danger;

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The call runs without asking.
    Allow,
    /// The operator is asked, whatever the mode.
    Ask,
    /// The call is refused.
    Deny,
}

/// Where a rule came from, for messages and for its `/path` patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleOrigin {
    /// Names the source in messages: `~/.claude/settings.json`,
    /// `--allowedTools`, `$KAIZEN_HOME/config.toml`…
    pub label: String,
    /// The directory `/path` patterns start from: the project of a
    /// project's settings file, the home directory for the user's, the
    /// workspace for flags.
    pub base: PathBuf,
}

/// One parsed rule, e.g. `Bash(npm run test:*)`.
#[derive(Debug, Clone)]
pub struct Rule {
    /// What the rule does when it matches.
    pub effect: Effect,
    /// The text as written, to show the operator which rule decided.
    pub text: String,
    /// Where the rule came from.
    pub origin: RuleOrigin,
    tool: String,
    tools: Tools,
    pub(super) spec: Spec,
}

/// What a rule's specifier matches.
#[derive(Debug, Clone)]
pub(super) enum Spec {
    /// No specifier, or `(*)`: every call of the tool.
    Any,
    /// A `Read(…)`/`Edit(…)` path pattern.
    Path(PathPattern),
    /// `domain:HOST`, matched against the URL's host.
    Domain(TextPattern),
    /// A command or name pattern; for a tool taking paths, also a path
    /// pattern (`Write(src/**)`), when the text is one.
    Text {
        pattern: TextPattern,
        path: Option<Box<PathPattern>>,
    },
}

/// A parse failure with a message saying what is wrong and how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permission rule `{text}`: {reason}")]
pub struct RuleError {
    /// The rule as written.
    pub text: String,
    /// What is wrong, and how to write it instead.
    pub reason: String,
}

impl RuleError {
    fn new(text: &str, reason: String) -> Self {
        RuleError {
            text: text.to_owned(),
            reason,
        }
    }
}

impl Rule {
    /// Parses `text`. `home` expands `~/` in path patterns.
    pub fn parse(
        effect: Effect,
        text: &str,
        origin: RuleOrigin,
        home: &Path,
    ) -> Result<Rule, RuleError> {
        let error = |reason| RuleError::new(text, reason);
        let (tool, spec_text) = split_rule(text.trim()).map_err(error)?;
        let (tools, tool) = match tool.strip_prefix(DANGER_PREFIX) {
            Some(range) => (
                Tools::Danger(parse_danger(range).map_err(error)?),
                tool.to_owned(),
            ),
            None => parse_tool(tool).map_err(error)?,
        };
        let spec = match spec_text {
            None => Spec::Any,
            Some(_) if matches!(tools, Tools::Danger(_)) => {
                return Err(error(
                    "a danger rule takes no specifier: it covers every call of the tools at \
                     those levels; name one tool instead to match its calls, as in \
                     `Bash(git push:*)`"
                        .into(),
                ));
            }
            Some(s) if s.trim().is_empty() => {
                return Err(error(format!(
                    "the specifier in `()` is empty; write `{tool}` alone to cover every call, or put \
                     a pattern inside, as in `Bash(npm run build)`"
                )));
            }
            Some(s) if s == "*" => Spec::Any,
            Some(_) if matches!(tools, Tools::McpServer(_)) => {
                return Err(error(
                    "a rule for a whole MCP server takes no specifier; name one tool, as in \
                     `mcp__github__create_issue`"
                        .into(),
                ));
            }
            Some(s) if matches!(tools, Tools::Family(_)) => {
                if s.ends_with(":*") {
                    return Err(error(format!(
                        "`:*` is Bash's prefix syntax; path rules take gitignore patterns, as in \
                         `{tool}(./.env*)` or `{tool}(./secrets/**)`"
                    )));
                }
                Spec::Path(PathPattern::parse(&s, &origin.base, home).map_err(error)?)
            }
            Some(s) => match s.strip_prefix("domain:") {
                Some(host) => Spec::Domain(parse_domain(host).map_err(error)?),
                None => {
                    let pattern = TextPattern::parse(&s).map_err(error)?;
                    let path = PathPattern::parse(&s, &origin.base, home).ok();
                    Spec::Text {
                        pattern,
                        path: path.map(Box::new),
                    }
                }
            },
        };
        let text = text.to_owned();
        Ok(Rule {
            effect,
            text,
            origin,
            tool,
            tools,
            spec,
        })
    }

    /// The tool name the rule names (`Bash`, `Read`, `mcp__github`…).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// True when the rule covers every call of the tool called `tool` at
    /// level `danger`: a rule naming it with no specifier, or a `danger:`
    /// rule whose levels include `danger`.
    pub fn covers_all_calls_of(&self, tool: &str, danger: Danger) -> bool {
        matches!(self.spec, Spec::Any)
            && match &self.tools {
                Tools::Danger(range) => range.contains(danger),
                _ => self.tool == tool,
            }
    }

    /// True when the rule has no specifier (`Bash`, `Bash(*)`,
    /// `mcp__server`): it covers every call of the tool(s).
    pub fn covers_whole_tool(&self) -> bool {
        matches!(self.spec, Spec::Any)
    }

    /// True when the rule matches the call. For a command, an allow rule
    /// must match every simple command of the line by itself; a deny or ask
    /// rule matches when any of them (or a wrapped one) matches.
    pub fn matches(&self, call: &CallFacts) -> bool {
        self.matches_with(call, &split_of(call))
    }

    /// For a `Read(…)` or `Edit(…)` path rule: the absolute glob it stands
    /// for, so the host can also hide those paths from plugins and sandboxed
    /// programs. A path matches when it or a directory above it matches.
    /// Patterns relative to the working directory (`./x`, `x`) are resolved
    /// against the origin's base; use [`Rule::path_glob_in`] to give the
    /// working directory. None for other rules.
    pub fn path_glob(&self) -> Option<String> {
        self.path_glob_in(&self.origin.base)
    }

    /// [`Rule::path_glob`] for a session whose working directory is `cwd`.
    pub fn path_glob_in(&self, cwd: &Path) -> Option<String> {
        match &self.spec {
            Spec::Path(pattern) => Some(pattern.absolute_glob(cwd)),
            _ => None,
        }
    }

    /// Whether the rule names the call's tool (or its path family).
    pub(super) fn applies_to_tool(&self, call: &CallFacts) -> bool {
        match &self.tools {
            Tools::McpServer(prefix) => call.tool.starts_with(prefix.as_str()),
            Tools::Family(family) => call.tool == self.tool || family.covers(&call.subject),
            Tools::Named => call.tool == self.tool,
            Tools::Danger(range) => range.contains(call.danger),
        }
    }

    /// [`Rule::matches`] with the call's line already taken apart.
    pub(super) fn matches_with(
        &self,
        call: &CallFacts,
        split: &Option<Result<Split, Unanalyzable>>,
    ) -> bool {
        if !self.applies_to_tool(call) {
            return false;
        }
        match (&self.spec, &call.subject) {
            (Spec::Any, _) => true,
            (Spec::Path(pattern), Subject::ReadPath(path) | Subject::EditPath(path)) => {
                matches!(&self.tools, Tools::Family(f) if f.covers(&call.subject))
                    && pattern.matches(path, call.cwd)
            }
            (
                Spec::Text {
                    path: Some(pattern),
                    ..
                },
                Subject::ReadPath(path) | Subject::EditPath(path),
            ) => pattern.matches(path, call.cwd),
            (Spec::Domain(host), Subject::Url(url)) => {
                url_host(url).is_some_and(|h| host.matches_whole(&h))
            }
            (Spec::Text { pattern, .. }, Subject::Name(name)) => pattern.matches_name(name),
            (Spec::Text { pattern, .. }, Subject::Command(command)) => match (self.effect, split) {
                (Effect::Allow, Some(Ok(split))) => {
                    !split.parts.is_empty()
                        && !split.anything_may_run()
                        && split.parts.iter().all(|part| pattern.allows(part))
                }
                (Effect::Allow, _) => false,
                (_, Some(Ok(split))) => split.all_texts().any(|t| pattern.matches_command(t)),
                (_, _) => shell_words::rough_pieces(command)
                    .iter()
                    .any(|t| pattern.matches_command(t)),
            },
            _ => false,
        }
    }
}

impl Rule {
    /// The program this rule is about whatever its arguments, when it is a
    /// command rule of that shape (`Bash(rm:*)`, `Bash(rm *)`): one plain
    /// program name, no path.
    pub fn whole_program(&self) -> Option<&str> {
        if self.tool != "Bash" {
            return None;
        }
        let Spec::Text { pattern, .. } = &self.spec else {
            return None;
        };
        pattern.whole_program()
    }

    /// Whether this command rule could match what a command line runs that
    /// was not fully analyzed or resolved (a deny or ask rule then asks).
    pub(super) fn could_match(
        &self,
        call: &CallFacts,
        split: &Option<Result<Split, Unanalyzable>>,
    ) -> bool {
        if !self.applies_to_tool(call) || !matches!(call.subject, Subject::Command(_)) {
            return false;
        }
        let Spec::Text { pattern, .. } = &self.spec else {
            return false;
        };
        match split {
            Some(Ok(split)) => split
                .unresolved
                .iter()
                .any(|start| pattern.could_match_start(start)),
            // Nothing about it is certain.
            Some(Err(_)) => true,
            None => false,
        }
    }
}
