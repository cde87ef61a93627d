//! The first step of a tool call's decision: the rules and the mode.

use super::rules::{CallFacts, Effect, Rule, RuleError, RuleOrigin, RuleSet, Subject};
use kaizen_protocol::{DangerTier, PermissionMode};
use kaizen_tools::{SubjectKind, Tool, ToolSpec};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// Where a call stands after the rules and the mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It may run.
    Allow(Grounds),
    /// The user must say.
    Ask(Grounds),
    /// It is refused.
    Deny(Grounds),
}

/// What a verdict rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grounds {
    /// Who decided: `rule`, `mode`, `hook`, `user`.
    pub by: &'static str,
    /// The rule's text with its origin (`Bash(rm:*)` in
    /// ~/.claude/settings.json), the hook's name, or the mode.
    pub source: String,
    /// Why, in a sentence for the user and the model.
    pub reason: String,
    /// An explicit ask rule (which a hook's allow cannot lift), as opposed
    /// to the mode's default.
    pub explicit: bool,
}

impl Grounds {
    fn rule(rule: &Rule, reason: String) -> Self {
        Self {
            by: "rule",
            source: format!("`{}` in {}", rule.text, rule.origin.label),
            reason,
            explicit: true,
        }
    }

    fn mode(mode: PermissionMode, reason: String) -> Self {
        Self {
            by: "mode",
            source: format!("permission mode {mode}"),
            reason,
            explicit: false,
        }
    }
}

/// Paths the deny rules keep from tools, as absolute globs (a path is
/// denied when it or a directory above it matches).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeniedPaths {
    /// Not to be read (nor changed): `Read(…)` deny rules.
    pub read: Vec<String>,
    /// Not to be changed: `Edit(…)` deny rules.
    pub edit: Vec<String>,
    /// Programs a deny rule refuses whatever their arguments
    /// (`Bash(rm:*)`, `Bash(curl *)`), by name: the OS sandbox keeps them
    /// from running at all, however a command line spells them.
    pub programs: Vec<String>,
}

/// The rules and the mode of a session. Rules can be added while it runs
/// ("allow always" at a prompt), and the mode changed (an embedder's
/// `set_permission_mode`).
#[derive(Debug)]
pub struct Permissions {
    mode: RwLock<PermissionMode>,
    rules: RwLock<RuleSet>,
    home: PathBuf,
}

impl Permissions {
    /// `rules` under `mode`; `home` expands `~/` in rules added later.
    pub fn new(mode: PermissionMode, rules: RuleSet, home: impl Into<PathBuf>) -> Self {
        Self {
            mode: RwLock::new(mode),
            rules: RwLock::new(rules),
            home: home.into(),
        }
    }

    /// No rules, every call allowed (`bypassPermissions`): for embedders
    /// and tests that do not want permission checks.
    pub fn allow_all() -> Self {
        Self::new(PermissionMode::BypassPermissions, RuleSet::new(), "/")
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        *self.mode.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the mode for the calls judged from now on.
    pub fn set_mode(&self, mode: PermissionMode) {
        *self.mode.write().unwrap_or_else(|e| e.into_inner()) = mode;
    }

    /// Adds a rule from `text`, e.g. one the user approved "always".
    pub fn add_rule(
        &self,
        effect: Effect,
        text: &str,
        origin: RuleOrigin,
    ) -> Result<(), RuleError> {
        let rule = Rule::parse(effect, text, origin, &self.home)?;
        self.rules
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(rule);
        Ok(())
    }

    /// True when a deny rule covers every call of the tool (it names the
    /// whole tool, or the tool's danger level): it is not offered to the
    /// model at all, as in Claude Code.
    pub fn hides(&self, tool: &ToolSpec) -> bool {
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        rules.rules().iter().any(|rule| {
            rule.effect == Effect::Deny && rule.covers_all_calls_of(&tool.name, tool.danger)
        })
    }

    /// The absolute globs of the paths deny rules keep from being read
    /// (`Read(…)`) and from being changed (`Edit(…)`), for the host to
    /// enforce for plugins and programs too, not only for the tools that
    /// declare paths; `cwd` anchors relative patterns.
    pub fn denied_paths(&self, cwd: &Path) -> DeniedPaths {
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        let mut denied = DeniedPaths::default();
        for rule in rules
            .rules()
            .iter()
            .filter(|rule| rule.effect == Effect::Deny)
        {
            if let Some(program) = rule.whole_program() {
                denied.programs.push(program.to_string());
                continue;
            }
            let Some(glob) = rule.path_glob_in(cwd) else {
                continue;
            };
            match rule.tool() {
                "Read" => denied.read.push(glob),
                _ => denied.edit.push(glob),
            }
        }
        denied
    }

    /// The verdict of the rules and the mode on `tool` called with `input`.
    pub fn evaluate(&self, tool: &dyn Tool, input: &serde_json::Value, cwd: &Path) -> Verdict {
        self.evaluate_in(self.mode(), tool, input, cwd)
    }

    /// [`Permissions::evaluate`] under `mode` instead of the session's (a
    /// sub-agent's, which is never wider: see
    /// [`PermissionMode::at_most`]).
    pub fn evaluate_in(
        &self,
        mode: PermissionMode,
        tool: &dyn Tool,
        input: &serde_json::Value,
        cwd: &Path,
    ) -> Verdict {
        let spec = tool.spec();
        let name = spec.name.as_str();
        let facts = facts_of(tool, input, cwd);
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        let decision = rules.decide(&facts);
        if let Some(decision) = decision.filter(|d| d.effect == Effect::Deny) {
            let rule = decision.rule;
            return Verdict::Deny(Grounds::rule(
                rule,
                format!(
                    "Permission to use {name} was denied by the rule `{}` in {}.",
                    rule.text, rule.origin.label
                ),
            ));
        }
        if mode == PermissionMode::Plan && !spec.read_only {
            return Verdict::Deny(Grounds::mode(
                PermissionMode::Plan,
                format!(
                    "{name} can change things, and this session is in plan mode, where only \
                     read-only tools run. Describe the change in your answer instead; the user \
                     can run it in another mode (--permission-mode default)."
                ),
            ));
        }
        if let Some(decision) = decision {
            let rule = decision.rule;
            return match (decision.effect, decision.unsure) {
                (Effect::Ask, true) => self.asking(
                    mode,
                    Grounds::rule(
                        rule,
                        format!(
                            "the command cannot be fully analyzed before it runs (an expansion, \
                             a glob, a brace list, a script read from input or a name defined in \
                             the line), and the rule `{}` in {} may apply to what it runs; spell \
                             the command out plainly, or the user must approve it",
                            rule.text, rule.origin.label
                        ),
                    ),
                ),
                (Effect::Ask, false) => self.asking(
                    mode,
                    Grounds::rule(
                        rule,
                        format!(
                            "the rule `{}` in {} asks before {name} runs",
                            rule.text, rule.origin.label
                        ),
                    ),
                ),
                _ => Verdict::Allow(Grounds::rule(
                    rule,
                    format!("allowed by `{}` in {}", rule.text, rule.origin.label),
                )),
            };
        }
        self.by_mode(mode, tool, &facts.subject)
    }

    /// The mode's default for a call no rule decides.
    fn by_mode(&self, mode: PermissionMode, tool: &dyn Tool, subject: &Subject) -> Verdict {
        let spec = tool.spec();
        let allow = |why: &str| Verdict::Allow(Grounds::mode(mode, why.to_string()));
        if spec.read_only {
            return allow("read-only tools run");
        }
        if spec.danger.tier() == DangerTier::Reads {
            return allow("safe tools run");
        }
        match mode {
            PermissionMode::BypassPermissions => return allow("nothing asks"),
            PermissionMode::AcceptEdits
                if matches!(subject, Subject::EditPath(_))
                    || spec.danger.tier() == DangerTier::Edits =>
            {
                return allow("file edits are accepted");
            }
            _ => {}
        }
        if tool.contained() {
            return allow("its effects stay inside the session's grant");
        }
        self.asking(
            mode,
            Grounds::mode(
                mode,
                format!(
                    "{} can reach beyond what this session granted (the network, or programs \
                 outside the full OS sandbox), so it needs the user's approval",
                    spec.name
                ),
            ),
        )
    }

    /// An ask, or in `dontAsk` mode a denial.
    fn asking(&self, mode: PermissionMode, grounds: Grounds) -> Verdict {
        if mode == PermissionMode::DontAsk {
            let reason = format!(
                "{}; this session never asks (permission mode dontAsk)",
                grounds.reason
            );
            return Verdict::Deny(Grounds { reason, ..grounds });
        }
        Verdict::Ask(grounds)
    }
}

/// A call of `tool` with `input` as rules see it.
pub fn facts_of<'a>(tool: &'a dyn Tool, input: &serde_json::Value, cwd: &'a Path) -> CallFacts<'a> {
    let spec = tool.spec();
    CallFacts {
        tool: &spec.name,
        danger: spec.danger,
        subject: subject_of(tool, input, cwd),
        cwd,
    }
}

/// What `tool`'s declared rule subject holds in `input`. A read path a
/// call leaves out (Grep's `path`) is the working directory, where the
/// tool then reads.
fn subject_of(tool: &dyn Tool, input: &serde_json::Value, cwd: &Path) -> Subject {
    let Some(declared) = tool.rule_subject() else {
        return Subject::None;
    };
    let value = input.get(&declared.field).and_then(|v| v.as_str());
    match (declared.kind, value) {
        (SubjectKind::Command, Some(text)) => Subject::Command(text.to_string()),
        (SubjectKind::ReadPath, Some(path)) => Subject::ReadPath(PathBuf::from(path)),
        (SubjectKind::ReadPath, None) => Subject::ReadPath(cwd.to_path_buf()),
        (SubjectKind::EditPath, Some(path)) => Subject::EditPath(PathBuf::from(path)),
        (SubjectKind::Url, Some(url)) => Subject::Url(url.to_string()),
        (SubjectKind::Name, Some(name)) => Subject::Name(name.to_string()),
        _ => Subject::None,
    }
}

/// The rule "allow always" adds for a call: the exact command for a
/// command, the path for a path, the host for a URL, the name for a
/// name; else the whole tool.
pub fn always_rule(tool: &dyn Tool, input: &serde_json::Value, cwd: &Path) -> String {
    let name = &tool.spec().name;
    match subject_of(tool, input, cwd) {
        // The command as it is: a `*` in it is the character, not a
        // wildcard (`ls *.txt` approved must not allow `ls x; rm *.txt`).
        Subject::Command(command) if !command.contains(['(', ')']) => {
            let literal = command.trim().replace('\\', "\\\\").replace('*', "\\*");
            format!("{name}({literal})")
        }
        Subject::EditPath(path) | Subject::ReadPath(path) => {
            let absolute = if path.is_absolute() {
                path
            } else {
                cwd.join(path)
            };
            format!("{name}(/{})", absolute.display())
        }
        Subject::Url(url) => match url::Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        {
            Some(host) => format!("{name}(domain:{host})"),
            None => name.clone(),
        },
        Subject::Name(value) if !value.contains(['(', ')']) => format!("{name}({value})"),
        _ => name.clone(),
    }
}
