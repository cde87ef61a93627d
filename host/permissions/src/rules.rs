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

use std::path::{Path, PathBuf};

use super::path_pattern::PathPattern;
use super::shell_words::{self, Split, Unanalyzable};
use super::text_pattern::{TextPattern, parse_domain, url_host};

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
    spec: Spec,
}

/// Which tools a rule names.
#[derive(Debug, Clone)]
enum Tools {
    /// The tool of that name.
    Named,
    /// The tool of that name, and every call with a path of the family.
    Family(Family),
    /// Every tool of an MCP server: the name prefix `mcp__server__`.
    McpServer(String),
}

/// The two path-rule families of Claude Code's syntax: `Read(…)` covers
/// every call reading a path, `Edit(…)` every call changing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Read,
    Edit,
}

impl Family {
    fn covers(self, subject: &Subject) -> bool {
        matches!(
            (self, subject),
            (Family::Read, Subject::ReadPath(_)) | (Family::Edit, Subject::EditPath(_))
        )
    }
}

#[derive(Debug, Clone)]
enum Spec {
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

/// What a tool call exposes to rule specifiers; the tool declares which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The tool declares nothing a specifier can match.
    None,
    /// A shell command line (Bash).
    Command(String),
    /// A path the tool reads (Read, Grep, Glob…); absolute or relative to
    /// [`CallFacts::cwd`].
    ReadPath(PathBuf),
    /// A path the tool changes (Edit, Write, MultiEdit, NotebookEdit).
    EditPath(PathBuf),
    /// A URL the tool fetches (WebFetch).
    Url(String),
    /// A name argument (Task's subagent type, a skill name).
    Name(String),
}

/// One call as rules see it.
#[derive(Debug, Clone)]
pub struct CallFacts<'a> {
    /// The tool's name, compared case-sensitively.
    pub tool: &'a str,
    /// What the call exposes to specifiers.
    pub subject: Subject,
    /// Where relative paths in the call resolve.
    pub cwd: &'a Path,
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
        let (tools, tool) = parse_tool(tool).map_err(error)?;
        let spec = match spec_text {
            None => Spec::Any,
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

    fn applies_to_tool(&self, call: &CallFacts) -> bool {
        match &self.tools {
            Tools::McpServer(prefix) => call.tool.starts_with(prefix.as_str()),
            Tools::Family(family) => call.tool == self.tool || family.covers(&call.subject),
            Tools::Named => call.tool == self.tool,
        }
    }

    fn matches_with(&self, call: &CallFacts, split: &Option<Result<Split, Unanalyzable>>) -> bool {
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
    fn could_match(&self, call: &CallFacts, split: &Option<Result<Split, Unanalyzable>>) -> bool {
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

/// Takes `Tool(specifier)` apart, unescaping `\(` and `\)` in the specifier.
fn split_rule(text: &str) -> Result<(&str, Option<String>), String> {
    let Some(open) = text.find('(') else {
        if text.contains(')') {
            return Err(
                "unbalanced parentheses: a `)` without `(`; write `Tool(specifier)`".into(),
            );
        }
        return Ok((text, None));
    };
    let inner = &text[open + 1..];
    let (mut depth, mut escaped, mut close) = (1usize, false, None);
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else {
        return Err(format!(
            "unbalanced parentheses: the `(` is never closed; write `{}(specifier)`, escaping a \
             literal parenthesis as `\\(` or `\\)`",
            &text[..open]
        ));
    };
    if close + 1 != inner.len() {
        return Err(
            "text follows the closing `)`; a rule is `Tool(specifier)` with nothing after it, \
                    and a literal parenthesis is written `\\)`"
                .into(),
        );
    }
    let spec = inner[..close].replace("\\(", "(").replace("\\)", ")");
    Ok((&text[..open], Some(spec)))
}

/// Checks a tool name and says which tools it names.
fn parse_tool(name: &str) -> Result<(Tools, String), String> {
    if name.is_empty() {
        return Err(
            "the tool name is missing; a rule is `Tool` or `Tool(specifier)`, as in \
                    `Bash(ls)`"
                .into(),
        );
    }
    let (bare, server_wide) = match name.strip_suffix("__*") {
        Some(bare) if bare.starts_with("mcp__") => (bare, true),
        _ => (name, false),
    };
    if let Some(bad) = bare
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "_-.".contains(*c)))
    {
        let hint = if bad == '*' {
            "tool names take no wildcards, except `mcp__server__*` for a whole MCP server"
                .to_owned()
        } else {
            format!("tool names are letters, digits, `_`, `-` and `.`, found `{bad}`")
        };
        return Err(format!(
            "`{name}` is not a tool name: {hint}; a specifier goes in parentheses right \
                            after the name, as in `Bash(npm test)`"
        ));
    }
    match bare.strip_prefix("mcp__") {
        Some("") => {
            Err("`mcp__` names no server; write `mcp__server` or `mcp__server__tool`".into())
        }
        Some(server) if server_wide || !server.contains("__") => Ok((
            Tools::McpServer(format!("mcp__{server}__")),
            bare.to_owned(),
        )),
        Some(_) => Ok((Tools::Named, bare.to_owned())),
        None => match bare {
            "Read" => Ok((Tools::Family(Family::Read), bare.to_owned())),
            "Edit" => Ok((Tools::Family(Family::Edit), bare.to_owned())),
            _ => Ok((Tools::Named, bare.to_owned())),
        },
    }
}

fn split_of(call: &CallFacts) -> Option<Result<Split, Unanalyzable>> {
    match &call.subject {
        Subject::Command(command) => Some(shell_words::split(command)),
        _ => None,
    }
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

#[cfg(test)]
mod tests;
