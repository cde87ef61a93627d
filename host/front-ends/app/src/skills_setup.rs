//! The session's skills, Claude Code's way: the user's, from
//! `~/.claude/skills` (or `$CLAUDE_CONFIG_DIR/skills`), and the
//! workspace's `.claude/skills` once the workspace is trusted — as trust
//! saw them: their `SKILL.md` comes from the snapshot, not the disk read
//! again. A skill of the user's wins over the workspace's of the same
//! name, as in Claude Code. The model sees each skill's name and
//! description in the system prompt ([`Skills::prompt`]) and loads one
//! through the `Skill` tool.

use std::path::Path;
use std::sync::Arc;

use kaizen_claude::skills::{self, Skill, SkillTool};
use kaizen_tools::Tool;

use crate::config::Setup;
use crate::notices::Notices;
use crate::trust::TrustStatus;

/// Where a workspace's skills are, below it.
pub const WORKSPACE_SKILLS: &str = ".claude/skills";

/// A session's skills.
pub struct Skills {
    found: Vec<Skill>,
}

impl Skills {
    /// The skills `setup` allows, each that cannot be used said in
    /// `notices`.
    pub fn of(setup: &Setup, notices: &Notices) -> Skills {
        let mut found: Vec<Skill> = Vec::new();
        if let Some(dir) = kaizen_claude::settings::user_dir() {
            let (user, notes) = skills::from_dir(&dir.join("skills"));
            found.extend(user);
            for note in notes {
                notices.note(format!("skill {note}"));
            }
        }
        if setup.trust == TrustStatus::Trusted {
            let base = setup.workspace.join(WORKSPACE_SKILLS);
            for (rel, text) in setup.snapshot.files_under(WORKSPACE_SKILLS) {
                let Some(folder) = rel.strip_suffix("/SKILL.md").filter(|f| !f.contains('/'))
                else {
                    continue;
                };
                match Skill::parse(text, &base.join(folder)) {
                    Ok(skill) if found.iter().any(|s| s.name == skill.name) => {
                        notices.note(format!(
                            "skill {}: the user's skill of the same name is used instead",
                            show(&base, folder)
                        ))
                    }
                    Ok(skill) => found.push(skill),
                    Err(why) => {
                        notices.note(format!("skill {}: not used: {why}", show(&base, folder)))
                    }
                }
            }
        }
        Skills { found }
    }

    /// The `Skill` tool, when there is a skill to load.
    pub fn tool(&self) -> Option<Arc<dyn Tool>> {
        (!self.found.is_empty()).then(|| Arc::new(SkillTool::new(self.found.clone())) as _)
    }

    /// The system prompt's list of skills, when there are any.
    pub fn prompt(&self) -> Option<String> {
        if self.found.is_empty() {
            return None;
        }
        let mut text = String::from(
            "# Skills\n\nThese skills are available through the Skill tool. When a task matches \
             one, call Skill with its name before doing the task, then follow what it returns.\n",
        );
        for skill in &self.found {
            text.push_str(&format!("\n- {}: {}", skill.name, skill.description));
        }
        Some(text)
    }
}

fn show(base: &Path, folder: &str) -> String {
    base.join(folder).join("SKILL.md").display().to_string()
}
