//! Claude Code's skills: a folder with a `SKILL.md` — front matter naming
//! the skill and saying when it helps, then instructions — and whatever
//! files the instructions use beside it. Only each skill's name and
//! description reach the model up front; the `Skill` tool
//! ([`crate::catalogue::SkillTool`])
//! hands over the instructions when the model asks for them, with the
//! folder they are in, so that the model reads and runs the files there
//! with the other tools (progressive disclosure, as Claude Code does).
//!
//! Where skills come from, and which count (a workspace's only once
//! trusted), is the caller's business: this module reads what it is given.

use std::path::{Path, PathBuf};

use crate::front_matter::{
    self, MAX_DESCRIPTION_CHARS, cut, first_paragraph, one_line, split_tools,
};

/// The most of a skill's instructions handed over; the rest is cut, with
/// a note. Claude Code advises keeping `SKILL.md` under 500 lines.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The longest name Claude Code accepts.
const MAX_NAME_CHARS: usize = 64;

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name: lowercase letters, digits and hyphens.
    pub name: String,
    /// What it does and when to use it: what the model sees up front.
    pub description: String,
    /// `allowed-tools`: permission rules for the calls it may make once
    /// loaded (the loop refuses the others until the next task).
    pub allowed_tools: Vec<String>,
    /// The folder it is in (its files are there).
    pub dir: PathBuf,
    /// Its instructions: `SKILL.md` after the front matter.
    pub body: String,
}

impl Skill {
    /// Reads `SKILL.md`'s `text`, found in the folder `dir`: the front
    /// matter's `name` (else the folder's name), `description` (else the
    /// first paragraph of the body) and `allowed-tools`. Errs, saying why,
    /// when the file is not UTF-8 or the name is not one Claude Code
    /// accepts.
    pub fn parse(text: &[u8], dir: &Path) -> Result<Skill, String> {
        let text = std::str::from_utf8(text).map_err(|_| "SKILL.md is not UTF-8".to_string())?;
        let (fields, body) = front_matter::read(text);
        let field = |key: &str| front_matter::field(&fields, key);
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = field("name")
            .and_then(|v| v.into_iter().next())
            .filter(|n| !n.is_empty())
            .unwrap_or(folder);
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(format!(
                "its name {name:?} is not lowercase letters, digits and hyphens (at most \
                 {MAX_NAME_CHARS})"
            ));
        }
        let description = field("description")
            .map(|v| v.join(" "))
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| first_paragraph(body));
        let description = one_line(&description, MAX_DESCRIPTION_CHARS);
        let allowed_tools = field("allowed-tools")
            .unwrap_or_default()
            .iter()
            .flat_map(|v| split_tools(v))
            .collect();
        Ok(Skill {
            name,
            description,
            allowed_tools,
            dir: dir.to_path_buf(),
            body: body.trim_start_matches(['\n', '\r']).to_string(),
        })
    }

    /// What the `Skill` tool returns for it, with `args` (Claude Code's
    /// `$ARGUMENTS`: put where the instructions say, else after them).
    pub fn load(&self, args: &str) -> String {
        let mut body = cut(&self.body, MAX_BODY_BYTES, "SKILL.md");
        if body.contains("$ARGUMENTS") {
            body = body.replace("$ARGUMENTS", args);
        } else if !args.trim().is_empty() {
            body.push_str(&format!("\n\nARGUMENTS: {args}"));
        }
        format!(
            "Base directory for this skill: {}\n\n{body}",
            self.dir.display()
        )
    }
}

/// The skills in `dir` (each in `dir/<folder>/SKILL.md`), read from disk;
/// with a note for each one that cannot be used.
pub fn from_dir(dir: &Path) -> (Vec<Skill>, Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    folders.sort();
    let files = folders.into_iter().filter_map(|folder| {
        let file = folder.join("SKILL.md");
        let size = std::fs::metadata(&file).ok()?.len();
        let text = if size > 4 * MAX_BODY_BYTES as u64 {
            Err(std::io::Error::other("too large to be a skill"))
        } else {
            std::fs::read(&file)
        };
        Some((folder, text))
    });
    from_files(files)
}

/// The skills in `folders` (`(its folder, its SKILL.md's bytes or why
/// not)`), with a note for each one that cannot be used. The first of a
/// name wins.
pub fn from_files(
    folders: impl IntoIterator<Item = (PathBuf, std::io::Result<Vec<u8>>)>,
) -> (Vec<Skill>, Vec<String>) {
    front_matter::read_each(folders, "skill", Skill::parse, |s| &s.name)
}

#[cfg(test)]
mod tests;
