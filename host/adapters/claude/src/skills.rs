//! Claude Code's skills: a folder with a `SKILL.md` — front matter naming
//! the skill and saying when it helps, then instructions — and whatever
//! files the instructions use beside it. Only each skill's name and
//! description reach the model up front; the `Skill` tool ([`SkillTool`])
//! hands over the instructions when the model asks for them, with the
//! folder they are in, so that the model reads and runs the files there
//! with the other tools (progressive disclosure, as Claude Code does).
//!
//! Where skills come from, and which count (a workspace's only once
//! trusted), is the caller's business: this module reads what it is given.

use std::path::{Path, PathBuf};

use kaizen_tools::{
    CallContext, Danger, RuleSubject, SubjectKind, Tool, ToolError, ToolErrorKind, ToolFuture,
    ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

/// The most of a skill's instructions handed over; the rest is cut, with
/// a note. Claude Code advises keeping `SKILL.md` under 500 lines.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The longest description Claude Code accepts.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The longest name Claude Code accepts.
const MAX_NAME_CHARS: usize = 64;

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name: lowercase letters, digits and hyphens.
    pub name: String,
    /// What it does and when to use it: what the model sees up front.
    pub description: String,
    /// `allowed-tools`: the tools it says it needs (not enforced yet).
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
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let (front, body) = split_front_matter(text);
        let fields = front.map(front_matter).unwrap_or_default();
        let field = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
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
        let description: String = description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(MAX_DESCRIPTION_CHARS)
            .collect();
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
        let mut body = cut(&self.body, MAX_BODY_BYTES);
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

/// Splits `---` front matter from the body.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..at]), &rest[at + line.len()..]);
        }
        at += line.len();
    }
    // No closing line: it was not front matter.
    (None, text)
}

/// The front matter's top-level fields, each with its values: a scalar
/// (plain, quoted, or a `|`/`>` block) is one value, a list (`[a, b]` or
/// `- a` lines) one per item. The subset of YAML that skills use; what
/// else there is is skipped.
fn front_matter(front: &str) -> Vec<(String, Vec<String>)> {
    let mut fields: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = front.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let mut values = Vec::new();
        let indented = |l: &&str| l.starts_with([' ', '\t']) || l.trim().is_empty();
        if value.starts_with('|') || value.starts_with('>') {
            let mut block = Vec::new();
            while let Some(next) = lines.next_if(indented) {
                block.push(next.trim());
            }
            let sep = if value.starts_with('|') { "\n" } else { " " };
            values.push(block.join(sep).trim().to_string());
        } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            values.extend(inner.split(',').map(unquote).filter(|v| !v.is_empty()));
        } else if value.is_empty() {
            while let Some(next) = lines.next_if(indented) {
                if let Some(item) = next.trim().strip_prefix("- ") {
                    values.push(unquote(item));
                } else if !next.trim().is_empty() {
                    values.push(next.trim().to_string());
                }
            }
        } else {
            values.push(unquote(value));
        }
        fields.push((key.trim().to_string(), values));
    }
    fields
}

/// A scalar without its quotes.
fn unquote(value: &str) -> String {
    let value = value.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner.to_string();
        }
    }
    value.to_string()
}

/// `allowed-tools` as Claude Code writes it: names separated by commas or
/// spaces, where a rule's parentheses may hold either (`Bash(git add:*)`).
fn split_tools(value: &str) -> Vec<String> {
    let mut tools = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                if !current.trim().is_empty() {
                    tools.push(current.trim().to_string());
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        tools.push(current.trim().to_string());
    }
    tools
}

/// The body's first paragraph that is not a heading.
fn first_paragraph(body: &str) -> String {
    body.split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#'))
        .unwrap_or("")
        .to_string()
}

/// `text` cut to at most `max` bytes at a character boundary, with a note.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[kaizen: SKILL.md goes on for {} more bytes, not shown: read it with Read]",
        &text[..end],
        text.len() - end
    )
}

/// The skills in `dir` (each in `dir/<folder>/SKILL.md`), read from disk;
/// with a note for each one that cannot be used.
pub fn from_dir(dir: &Path) -> (Vec<Skill>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (found, notes);
    };
    let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    folders.sort();
    for folder in folders {
        let file = folder.join("SKILL.md");
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        if meta.len() > 4 * MAX_BODY_BYTES as u64 {
            notes.push(format!("{}: too large to be a skill", file.display()));
            continue;
        }
        match std::fs::read(&file).map_err(|e| e.to_string()) {
            Ok(text) => match Skill::parse(&text, &folder) {
                Ok(skill) => found.push(skill),
                Err(why) => notes.push(format!("{}: not used: {why}", file.display())),
            },
            Err(why) => notes.push(format!("{}: not read: {why}", file.display())),
        }
    }
    (found, notes)
}

/// The `Skill` tool over a set of skills.
pub struct SkillTool {
    spec: ToolSpec,
    skills: Vec<Skill>,
    subject: RuleSubject,
}

impl SkillTool {
    /// The tool for `skills` (their names should be unique: the first of a
    /// name is the one loaded).
    pub fn new(skills: Vec<Skill>) -> SkillTool {
        SkillTool {
            spec: ToolSpec {
                name: "Skill".into(),
                description: "Loads a skill: instructions for one kind of task, with files \
                    beside them. The skills there are, each with what it is for, are listed in \
                    the system prompt. When a task matches one, call this tool with the skill's \
                    name before doing the task, then follow what it returns: its instructions \
                    and the folder its files are in (read and run them with the other tools). \
                    `args`, when given, is what the skill works on."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "skill": {"type": "string", "description": "The skill's name, as listed"},
                        "args": {"type": "string", "description": "What the skill works on, if anything"}
                    },
                    "required": ["skill"],
                    "additionalProperties": false
                }),
                danger: Danger::Safe,
                read_only: true,
            },
            skills,
            subject: RuleSubject {
                kind: SubjectKind::Name,
                field: "skill".into(),
            },
        }
    }

    fn run(&self, input: &Value) -> Result<ToolOutput, ToolError> {
        let wanted = input["skill"].as_str().unwrap_or("");
        let wanted = wanted.strip_prefix('/').unwrap_or(wanted);
        let args = input["args"].as_str().unwrap_or("");
        match self.skills.iter().find(|s| s.name == wanted) {
            Some(skill) => Ok(ToolOutput::text(skill.load(args))),
            None => {
                let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
                Err(ToolError::new(
                    ToolErrorKind::NotFound,
                    format!(
                        "there is no skill {wanted:?}; the skills are: {}",
                        names.join(", ")
                    ),
                ))
            }
        }
    }
}

impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> &str {
        "kaizen"
    }

    fn rule_subject(&self) -> Option<&RuleSubject> {
        Some(&self.subject)
    }

    /// It hands over text read when the session started, nothing else.
    fn contained(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, _ctx: &'a CallContext, input: &'a Value) -> ToolFuture<'a> {
        Box::pin(async move { self.run(input) })
    }
}

#[cfg(test)]
mod tests;
