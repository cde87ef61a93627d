//! The session's skills and slash commands, Claude Code's way: the
//! user's, from `~/.claude/skills` and `~/.claude/commands` (or under
//! `$CLAUDE_CONFIG_DIR`), and the workspace's `.claude/skills` and
//! `.claude/commands` once the workspace is trusted — as trust saw them:
//! their files come from the snapshot, not the disk read again. The user's
//! win over the workspace's of the same name, as in Claude Code. The model
//! sees each one's name and description in the system prompt and loads
//! one through the `Skill` tool (or `SlashCommand`); a task that starts
//! with `/name` becomes that command's prompt
//! ([`Catalogue::expand_task`]).

use std::path::PathBuf;
use std::sync::Arc;

use kaizen_claude::catalogue::{Catalogue, SkillTool};
use kaizen_claude::commands;
use kaizen_claude::skills::{self, Skill};
use kaizen_tools::ToolRegistry;

use crate::config::Setup;
use crate::notices::Notices;
use crate::trust::TrustStatus;

/// Where a workspace's skills are, below it.
pub const WORKSPACE_SKILLS: &str = ".claude/skills";

/// Where a workspace's slash commands are, below it.
pub const WORKSPACE_COMMANDS: &str = ".claude/commands";

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
    }
    if setup.trust == TrustStatus::Trusted {
        let base = setup.workspace.join(WORKSPACE_SKILLS);
        for (rel, text) in setup.snapshot.files_under(WORKSPACE_SKILLS) {
            let Some(folder) = rel.strip_suffix("/SKILL.md").filter(|f| !f.contains('/')) else {
                continue;
            };
            let path = base.join(folder).join("SKILL.md");
            match Skill::parse(text, &base.join(folder)) {
                Ok(skill) if catalogue.skills.iter().any(|s| s.name == skill.name) => {
                    notes.push(format!("{}: a skill of yours has its name", path.display()))
                }
                Ok(skill) => catalogue.skills.push(skill),
                Err(why) => notes.push(format!("{}: not used: {why}", path.display())),
            }
        }
        let base = setup.workspace.join(WORKSPACE_COMMANDS);
        let mut files: Vec<(PathBuf, std::io::Result<Vec<u8>>)> = setup
            .snapshot
            .files_under(WORKSPACE_COMMANDS)
            .filter(|(rel, _)| rel.ends_with(".md"))
            .map(|(rel, text)| (base.join(rel), Ok(text.to_vec())))
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let (found, skipped) = commands::from_files(files);
        notes.extend(skipped);
        for command in found {
            if catalogue.commands.iter().any(|c| c.name == command.name) {
                notes.push(format!(
                    "{}: a command of yours has its name",
                    command.path.display()
                ));
            } else {
                catalogue.commands.push(command);
            }
        }
    }
    for note in notes {
        notices.note(format!("skills and commands: {note}"));
    }
    catalogue
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
