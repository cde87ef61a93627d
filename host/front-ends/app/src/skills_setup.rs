//! The session's skills, slash commands and agent files, Claude Code's
//! way: the user's, from `~/.claude/skills`, `commands` and `agents` (or
//! under `$CLAUDE_CONFIG_DIR`), and the workspace's `.claude/skills`,
//! `commands` and `agents` once the workspace is trusted — as trust saw them:
//! their files come from the snapshot, not the disk read again. The user's
//! win over the workspace's of the same name, as in Claude Code. The model
//! sees each one's name and description in the system prompt and loads
//! one through the `Skill` tool (or `SlashCommand`); a task that starts
//! with `/name` becomes that command's prompt
//! ([`Catalogue::expand_task`]); `Task` starts an agent file's sub-agent
//! by its name ([`agent_types`]).

use std::path::PathBuf;
use std::sync::Arc;

use kaizen_claude::agents;
use kaizen_claude::catalogue::{Catalogue, SkillTool};
use kaizen_claude::commands;
use kaizen_claude::skills;
use kaizen_permissions::{Effect, Rule, RuleOrigin};
use kaizen_tools::ToolRegistry;

use crate::config::Setup;
use crate::notices::Notices;
use crate::trust::TrustStatus;

/// Where a workspace's skills are, below it.
pub const WORKSPACE_SKILLS: &str = ".claude/skills";

/// Where a workspace's slash commands are, below it.
pub const WORKSPACE_COMMANDS: &str = ".claude/commands";

/// Where a workspace's agent files are, below it.
pub const WORKSPACE_AGENTS: &str = ".claude/agents";

/// The skills and commands `setup` allows, each that cannot be used said
/// in `notices`.
pub fn catalogue(setup: &Setup, notices: &Notices) -> Catalogue {
    let mut catalogue = Catalogue::default();
    let mut notes = Vec::new();
    if let Some(dir) = kaizen_claude::settings::user_dir() {
        let (found, skipped) = skills::from_dir(&dir.join("skills"));
        catalogue.skills.extend(found);
        notes.extend(skipped);
        let (found, skipped) = commands::from_dir(&dir.join("commands"));
        catalogue.commands.extend(found);
        notes.extend(skipped);
        let (found, skipped) = agents::from_dir(&dir.join("agents"));
        catalogue.agents.extend(found);
        notes.extend(skipped);
    }
    if setup.trust == TrustStatus::Trusted {
        let base = setup.workspace.join(WORKSPACE_SKILLS);
        let folders = setup
            .snapshot
            .files_under(WORKSPACE_SKILLS)
            .filter_map(|(rel, text)| {
                let folder = rel.strip_suffix("/SKILL.md").filter(|f| !f.contains('/'))?;
                Some((base.join(folder), Ok(text.to_vec())))
            });
        let (found, skipped) = skills::from_files(folders);
        notes.extend(skipped);
        add_unless_named(
            &mut catalogue.skills,
            found,
            |s| (&s.name, &s.dir),
            &mut notes,
        );
        let (found, skipped) =
            commands::from_files(workspace_files(setup, WORKSPACE_COMMANDS, true));
        notes.extend(skipped);
        add_unless_named(
            &mut catalogue.commands,
            found,
            |c| (&c.name, &c.path),
            &mut notes,
        );
        let (found, skipped) = agents::from_files(workspace_files(setup, WORKSPACE_AGENTS, false));
        notes.extend(skipped);
        add_unless_named(
            &mut catalogue.agents,
            found,
            |a| (&a.name, &a.path),
            &mut notes,
        );
    }
    notes.extend(unreadable_rules(&catalogue, &setup.workspace));
    for note in notes {
        notices.note(format!("skills and commands: {note}"));
    }
    catalogue
}

/// The `allowed-tools` entries of `catalogue` that are not permission
/// rules, each said: it allows nothing, so the calls it meant to allow
/// are refused while its skill is loaded (closed, but not silently).
fn unreadable_rules(catalogue: &Catalogue, workspace: &std::path::Path) -> Vec<String> {
    let home = std::env::home_dir().unwrap_or_default();
    let skills = catalogue.skills.iter().map(|s| (&s.name, &s.allowed_tools));
    let commands = catalogue
        .commands
        .iter()
        .map(|c| (&c.name, &c.allowed_tools));
    let mut notes = Vec::new();
    for (name, allowed) in skills.chain(commands) {
        let origin = RuleOrigin {
            label: format!("the skill {name}"),
            base: workspace.to_path_buf(),
        };
        for text in allowed {
            if let Err(err) = Rule::parse(Effect::Allow, text, origin.clone(), &home) {
                notes.push(format!(
                    "`{name}`: its allowed-tools entry `{text}` is not a permission rule \
                     ({err}), so the calls it meant to allow are refused while it is loaded"
                ));
            }
        }
    }
    notes
}

/// Adds the workspace's `found` to the user's `mine`, but for those named
/// as one of the user's (noted): `name_and_path` says what each is called
/// and where it comes from.
fn add_unless_named<T>(
    mine: &mut Vec<T>,
    found: Vec<T>,
    name_and_path: impl Fn(&T) -> (&String, &PathBuf),
    notes: &mut Vec<String>,
) {
    for item in found {
        let (name, path) = name_and_path(&item);
        if mine.iter().any(|m| name_and_path(m).0 == name) {
            notes.push(format!("{}: one of yours is named {name}", path.display()));
        } else {
            mine.push(item);
        }
    }
}

/// The `*.md` files the snapshot holds under `dir` (in its subfolders
/// too when `nested`), by their paths in the workspace, in order.
fn workspace_files(
    setup: &Setup,
    dir: &str,
    nested: bool,
) -> Vec<(PathBuf, std::io::Result<Vec<u8>>)> {
    let base = setup.workspace.join(dir);
    let mut files: Vec<(PathBuf, std::io::Result<Vec<u8>>)> = setup
        .snapshot
        .files_under(dir)
        .filter(|(rel, _)| rel.ends_with(".md") && (nested || !rel.contains('/')))
        .map(|(rel, text)| (base.join(rel), Ok(text.to_vec())))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

/// The sub-agent types `catalogue`'s agent files define, for the loop.
pub fn agent_types(catalogue: &Catalogue) -> Vec<kaizen_loop::AgentType> {
    catalogue
        .agents
        .iter()
        .map(|agent| kaizen_loop::AgentType {
            name: agent.name.clone(),
            description: agent.description.clone(),
            tools: agent.tools.clone(),
            instructions: agent.prompt.clone(),
            permission_mode: agent.permission_mode,
        })
        .collect()
}

/// Puts `Skill` and `SlashCommand` over `catalogue` in `registry`, when
/// it has anything to load.
pub fn register(catalogue: &Arc<Catalogue>, registry: &mut ToolRegistry, notices: &Notices) {
    if catalogue.is_empty() {
        return;
    }
    for tool in [
        SkillTool::skill(catalogue.clone()),
        SkillTool::slash_command(catalogue.clone()),
    ] {
        if let Err(err) = registry.register(Arc::new(tool)) {
            notices.note(format!("a tool for skills is not available: {err}"));
        }
    }
}
