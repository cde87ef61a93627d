//! The session's guard, from configuration and flags: the permission mode
//! and rules (Kaizen's `[permissions]`, Claude Code's settings files,
//! `--allowedTools` and `--disallowedTools`), the hooks (hook plugins and
//! Claude Code's command hooks) and who approves.
//!
//! What the workspace says counts as far as its trust allows: its deny and
//! ask rules always (they can only narrow), a stricter mode (`plan`,
//! `dontAsk`) always, its allow rules and command hooks only once the
//! workspace is trusted, and a looser mode never.

use crate::config::{PermissionsSection, Setup};
use crate::permission_flags::PermissionArgs;
use crate::trust::TrustStatus;
use kaizen_claude::settings::{PROJECT_FILES, user_dir};
use kaizen_claude::{ClaudeSettings, CommandHook, CommandRunner, SettingsPermissions};
use kaizen_hooks::{Hook, Priority};
use kaizen_loop::{Guard, HookDispatcher};
use kaizen_permissions::{Effect, Permissions, Rule, RuleOrigin, RuleSet};
use kaizen_plugin_host::{HookSettings, Origin, PluginSet};
use kaizen_protocol::{Approver, PermissionMode};
use kaizen_sandbox::{Containment, Widening};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The permission rules and mode, read before the plugins load (their
/// path rules shape what plugins and programs may touch), with the Claude
/// Code settings the hooks come from after.
pub struct PermissionSetup {
    /// The rules and the mode.
    pub permissions: Permissions,
    /// Settings that did not take effect, and why.
    pub notes: Vec<String>,
    claude_user: Option<PathBuf>,
    user_settings: Option<ClaudeSettings>,
    project_settings: Vec<(&'static str, ClaudeSettings)>,
}

/// The guard and what the user should hear about how it was built.
pub struct GuardSetup {
    /// The guard.
    pub guard: Guard,
    /// Settings that did not take effect, and why.
    pub notes: Vec<String>,
}

/// Rules and a mode from one place.
struct Source {
    label: String,
    allow: Vec<String>,
    ask: Vec<String>,
    deny: Vec<String>,
    mode: Option<String>,
    /// In the workspace: narrows only until trusted.
    workspace: bool,
}

impl Source {
    fn kaizen(label: &str, section: &PermissionsSection, workspace: bool) -> Self {
        Self {
            label: label.to_string(),
            allow: section.allow.clone(),
            ask: section.ask.clone(),
            deny: section.deny.clone(),
            mode: section.default_mode.clone(),
            workspace,
        }
    }

    fn claude(settings: &ClaudeSettings, label: String, workspace: bool) -> Self {
        let SettingsPermissions {
            allow,
            ask,
            deny,
            default_mode,
        } = settings.permissions.clone();
        Self {
            label,
            allow,
            ask,
            deny,
            mode: default_mode,
            workspace,
        }
    }
}

/// Reads the permission rules and mode from every source.
pub fn permissions(setup: &Setup, flags: &PermissionArgs) -> anyhow::Result<PermissionSetup> {
    let mut notes = Vec::new();
    let trusted = setup.trust == TrustStatus::Trusted;
    let workspace = &setup.workspace;
    let home = std::env::home_dir().unwrap_or_else(|| PathBuf::from("/"));
    let claude_user = user_dir();
    let user_settings = match &claude_user {
        Some(dir) => ClaudeSettings::load(&dir.join("settings.json"))?,
        None => None,
    };
    // The workspace's settings as the snapshot read them (what trust was
    // decided on). One that does not parse is an error once trusted;
    // before that a note, as a program of a session could have written it.
    let mut project_settings = Vec::new();
    for file in PROJECT_FILES {
        let Some(bytes) = setup.snapshot.file(file) else {
            continue;
        };
        let path = workspace.join(file);
        let parsed = std::str::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))
            .and_then(|text| ClaudeSettings::parse(text, &path));
        match parsed {
            Ok(settings) => project_settings.push((file, settings)),
            Err(err) if !trusted => {
                notes.push(format!(
                    "{err:#}; it is ignored (the workspace is not trusted)"
                ));
            }
            Err(err) => return Err(err),
        }
    }

    let mut sources = vec![Source::kaizen(
        "$KAIZEN_HOME/config.toml",
        &setup.user_permissions,
        false,
    )];
    if let Some(settings) = &user_settings {
        sources.push(Source::claude(
            settings,
            display_home(&settings.path, &home),
            false,
        ));
    }
    sources.push(Source::kaizen(
        "kaizen.toml",
        &setup.project_permissions,
        true,
    ));
    for (file, settings) in &project_settings {
        sources.push(Source::claude(settings, file.to_string(), true));
    }
    sources.push(Source {
        label: "--allowedTools".into(),
        allow: split_rules(&flags.allowed_tools),
        ..Source::kaizen("", &PermissionsSection::default(), false)
    });
    sources.push(Source {
        label: "--disallowedTools".into(),
        deny: split_rules(&flags.disallowed_tools),
        ..Source::kaizen("", &PermissionsSection::default(), false)
    });

    let mut rules = RuleSet::new();
    for source in &sources {
        add_rules(&mut rules, source, trusted, workspace, &home, &mut notes)?;
    }
    let mode = choose_mode(flags, &sources, &mut notes)?;
    Ok(PermissionSetup {
        permissions: Permissions::new(mode, rules, &home),
        notes,
        claude_user,
        user_settings,
        project_settings,
    })
}

/// Who answers for a session besides its configuration.
#[derive(Default)]
pub struct Answerers {
    /// Approves tool calls that ask; `None` refuses them.
    pub approver: Option<Arc<dyn Approver>>,
    /// The driving program's own hooks (an Agent SDK's callbacks).
    pub hooks: Vec<Arc<dyn Hook>>,
}

/// Builds the guard of a `kaizen run`: the permissions, the hooks of the
/// loaded hook plugins and of Claude Code's settings (the workspace's only
/// once trusted; their commands confined by the session's `containment`),
/// then the driving program's own hooks, and the approver.
pub fn build(
    setup: &Setup,
    containment: &Containment,
    permissions: PermissionSetup,
    plugins: &PluginSet,
    answerers: Answerers,
) -> anyhow::Result<GuardSetup> {
    let Answerers {
        approver,
        hooks: own_hooks,
    } = answerers;
    let PermissionSetup {
        permissions,
        mut notes,
        claude_user,
        user_settings,
        project_settings,
    } = permissions;
    let trusted = setup.trust == TrustStatus::Trusted;
    let mut hooks = plugin_hooks(setup, plugins)?;
    if setup.hooks.claude != Some(false) {
        let runner = Arc::new(command_runner(setup, containment, claude_user.as_deref()));
        let mut files: Vec<&ClaudeSettings> = user_settings.iter().collect();
        for (file, settings) in &project_settings {
            if trusted {
                files.push(settings);
            } else if !settings.hooks.is_empty() {
                notes.push(format!(
                    "{file}: its hooks are not run (the workspace is not trusted)"
                ));
            }
        }
        for settings in files {
            let (found, problems) = CommandHook::from_settings(settings, &runner);
            hooks.extend(
                found
                    .into_iter()
                    .map(|hook| Arc::new(hook) as Arc<dyn Hook>),
            );
            notes.extend(problems);
        }
    }
    hooks.extend(own_hooks);
    let mut dispatcher = HookDispatcher::new(hooks);
    if let Some(secs) = setup
        .hooks
        .timeout_seconds
        .filter(|s| s.is_finite() && *s > 0.0)
    {
        dispatcher = dispatcher.with_default_timeout(Duration::from_secs_f64(secs));
    }
    Ok(GuardSetup {
        guard: Guard::new(permissions, dispatcher, approver),
        notes,
    })
}

/// The hook plugins, in load order (built-in ones only when the user's
/// `[hooks] builtins` names them), each run as the user's
/// `[hooks.plugins.NAME]` says.
fn plugin_hooks(setup: &Setup, plugins: &PluginSet) -> anyhow::Result<Vec<Arc<dyn Hook>>> {
    let mut hooks = Vec::new();
    for plugin in &plugins.loaded {
        let name = &plugin.manifest.plugin.name;
        // Built-in hooks are there for the user to turn on.
        if plugin.source.origin == Origin::Builtin && !setup.hooks.builtins.contains(name) {
            continue;
        }
        let configured = setup.hooks.plugins.get(name).cloned().unwrap_or_default();
        let priority = match &configured.priority {
            Some(text) => Some(Priority::parse(text).ok_or_else(|| {
                anyhow::anyhow!(
                    "[hooks.plugins.{name}] priority = \"{text}\": use CRITICAL, HIGH, NORMAL, LOW or a number"
                )
            })?),
            None => None,
        };
        let settings = HookSettings {
            required: configured.required,
            priority,
            timeout: configured
                .timeout_seconds
                .filter(|secs| secs.is_finite() && *secs > 0.0)
                .map(Duration::from_secs_f64),
        };
        hooks.extend(plugin.hook_handle(settings));
    }
    Ok(hooks)
}

/// Adds one source's rules. A rule that does not parse is an error when
/// it would deny or ask (skipping it would loosen what the user asked
/// for), and a note when it would allow.
fn add_rules(
    rules: &mut RuleSet,
    source: &Source,
    trusted: bool,
    workspace: &Path,
    home: &Path,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let origin = || RuleOrigin {
        label: source.label.clone(),
        base: workspace.to_path_buf(),
    };
    let lists = [
        (Effect::Deny, &source.deny),
        (Effect::Ask, &source.ask),
        (Effect::Allow, &source.allow),
    ];
    for (effect, texts) in lists {
        if effect == Effect::Allow && source.workspace && !trusted && !texts.is_empty() {
            notes.push(format!(
                "{}: its allow rules are not used (the workspace is not trusted)",
                source.label
            ));
            continue;
        }
        for text in texts {
            match Rule::parse(effect, text, origin(), home) {
                Ok(rule) => rules.push(rule),
                Err(err) if effect == Effect::Allow => {
                    notes.push(format!("{}: {err}; it is skipped", source.label))
                }
                Err(err) => {
                    return Err(anyhow::anyhow!("{}: {err}", source.label));
                }
            }
        }
    }
    Ok(())
}

/// The mode: the flag, else a stricter one the workspace asks for, else
/// the user's (Kaizen's config over Claude Code's settings), else
/// `default`. A workspace cannot loosen the mode, trusted or not.
fn choose_mode(
    flags: &PermissionArgs,
    sources: &[Source],
    notes: &mut Vec<String>,
) -> anyhow::Result<PermissionMode> {
    if let Some(flag) = &flags.permission_mode {
        return PermissionMode::parse(flag)
            .map_err(|err| anyhow::anyhow!("--permission-mode: {err}"));
    }
    let mut user = None;
    let mut stricter = None;
    for source in sources {
        let Some(name) = &source.mode else { continue };
        let mode = PermissionMode::parse(name)
            .map_err(|err| anyhow::anyhow!("{}: {err}", source.label))?;
        if !source.workspace {
            user = user.or(Some(mode));
        } else if matches!(mode, PermissionMode::Plan | PermissionMode::DontAsk) {
            stricter = stricter.or(Some(mode));
        } else if mode != PermissionMode::Default {
            notes.push(format!(
                "{}: the mode {mode} is not used (a workspace can only make the mode stricter)",
                source.label
            ));
        }
    }
    Ok(stricter.or(user).unwrap_or_default())
}

/// Claude Code's rule lists on the command line: rules separated by
/// commas or spaces, where a rule's parentheses may hold either.
pub fn split_rules(values: &[String]) -> Vec<String> {
    let mut rules = Vec::new();
    for value in values {
        let mut depth = 0usize;
        let mut current = String::new();
        for c in value.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !current.trim().is_empty() {
                        rules.push(std::mem::take(&mut current));
                    }
                    current.clear();
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        if !current.trim().is_empty() {
            rules.push(current);
        }
    }
    rules
}

/// Command hooks run in the session's containment, as Bash does (Kaizen's
/// state and the deny rules' paths hidden, configuration read-only), with
/// the workspace and added directories, and two named widenings: the
/// hook scripts of the user's Claude Code directory readable
/// (`~/.claude/hooks`; not the rest, which holds Claude Code's
/// credentials), and the network only when the user's `[hooks]
/// command-network` says so.
fn command_runner(
    setup: &Setup,
    containment: &Containment,
    claude_user: Option<&Path>,
) -> CommandRunner {
    let mut widenings: Vec<Widening> = claude_user
        .map(|dir| dir.join("hooks"))
        .filter(|dir| dir.is_dir())
        .map(Widening::HookScripts)
        .into_iter()
        .collect();
    if setup.hooks.command_network {
        widenings.push(Widening::HookNetwork);
    }
    let policy = containment.policy(containment.session_scope(), &widenings);
    CommandRunner::new(policy, setup.workspace.clone())
}

/// `path` with the home directory shown as `~`.
fn display_home(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_lists_split_outside_parentheses() {
        let flags = vec![
            "Bash(npm run test:*) Edit,Read(./a b.txt)".to_string(),
            "WebFetch(domain:x.com)".to_string(),
        ];
        assert_eq!(
            split_rules(&flags),
            [
                "Bash(npm run test:*)",
                "Edit",
                "Read(./a b.txt)",
                "WebFetch(domain:x.com)"
            ]
        );
        assert!(split_rules(&[" , ".to_string()]).is_empty());
    }
}
