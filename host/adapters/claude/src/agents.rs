//! Claude Code's agent files: `.claude/agents/<name>.md` (or
//! `~/.claude/agents/`), each a kind of sub-agent that `Task` can start by
//! its name. The front matter says its `name`, when to use it
//! (`description`), which `tools` it gets (all of the session's when
//! left out), its `model` and its `permissionMode` (which can only make
//! the session's stricter for it); the body is its instructions.

use std::path::{Path, PathBuf};

use kaizen_protocol::PermissionMode;

use crate::front_matter::{self, MAX_DESCRIPTION_CHARS, first_paragraph, one_line, split_tools};

/// Claude Code's names for a model family, which mean nothing to another
/// provider: such an agent runs on the session's model.
const MODEL_ALIASES: &[&str] = &["inherit", "sonnet", "opus", "haiku"];

/// One agent file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFile {
    /// Its name, as `subagent_type` names it.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The tools it gets; `None`: all of the session's.
    pub tools: Option<Vec<String>>,
    /// The model it asks for, when that is a model's name rather than one
    /// of Claude Code's aliases.
    pub model: Option<String>,
    /// `permissionMode`: the mode its calls are judged under, when stricter
    /// than the session's.
    pub permission_mode: Option<PermissionMode>,
    /// Its instructions.
    pub prompt: String,
    /// The file it comes from.
    pub path: PathBuf,
}

impl AgentFile {
    /// Reads the agent file `path` holding `text`. Errs, saying why, when
    /// it is not UTF-8, names no usable name or has no instructions.
    pub fn parse(text: &[u8], path: &Path) -> Result<AgentFile, String> {
        let text = std::str::from_utf8(text).map_err(|_| "it is not UTF-8".to_string())?;
        let (fields, body) = front_matter::read(text);
        let field = |key: &str| front_matter::field(&fields, key);
        let name = field("name")
            .and_then(|v| v.into_iter().next())
            .filter(|n| !n.is_empty())
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_default();
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "its name {name:?} is not letters, digits, `-` and `_`"
            ));
        }
        let prompt = body.trim().to_string();
        if prompt.is_empty() {
            return Err("it has no instructions after its front matter".into());
        }
        let description = field("description")
            .map(|v| v.join(" "))
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| first_paragraph(body));
        let tools = field("tools")
            .map(|v| v.iter().flat_map(|t| split_tools(t)).collect::<Vec<_>>())
            .filter(|t| !t.is_empty());
        let model = field("model")
            .and_then(|v| v.into_iter().next())
            .filter(|m| !m.is_empty() && !MODEL_ALIASES.contains(&m.as_str()));
        let permission_mode = field("permissionMode")
            .and_then(|v| v.into_iter().next())
            .filter(|m| !m.is_empty())
            .map(|m| PermissionMode::parse(&m))
            .transpose()
            .map_err(|err| format!("its permissionMode: {err}"))?;
        Ok(AgentFile {
            name,
            description: one_line(&description, MAX_DESCRIPTION_CHARS),
            tools,
            model,
            permission_mode,
            prompt,
            path: path.to_path_buf(),
        })
    }
}

/// The agent files in `files` (`(path, its bytes or why not)`), with a
/// note for each one that cannot be used. The first of a name wins.
pub fn from_files(
    files: impl IntoIterator<Item = (PathBuf, std::io::Result<Vec<u8>>)>,
) -> (Vec<AgentFile>, Vec<String>) {
    front_matter::read_each(files, "agent", AgentFile::parse, |a| &a.name)
}

/// The agent files in `dir` (`*.md`), read from disk.
pub fn from_dir(dir: &Path) -> (Vec<AgentFile>, Vec<String>) {
    from_files(front_matter::read_markdown_files(dir, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AgentFile, String> {
        AgentFile::parse(
            text.as_bytes(),
            Path::new("/w/.claude/agents/code-reviewer.md"),
        )
    }

    #[test]
    fn reads_claude_codes_agent_files() {
        let agent = parse(
            "---\nname: code-reviewer\ndescription: Reviews code. Use after writing code.\n\
             tools: Read, Grep, Glob\nmodel: sonnet\n---\nYou review code for bugs.\n",
        )
        .unwrap();
        assert_eq!(agent.name, "code-reviewer");
        assert_eq!(agent.description, "Reviews code. Use after writing code.");
        assert_eq!(
            agent.tools,
            Some(vec!["Read".into(), "Grep".into(), "Glob".into()])
        );
        assert_eq!(agent.model, None, "an alias runs on the session's model");
        assert_eq!(agent.prompt, "You review code for bugs.");
        let all = parse("---\ndescription: x\nmodel: gpt-4o-mini\n---\nDo it.").unwrap();
        assert_eq!(all.tools, None);
        assert_eq!(all.model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(all.name, "code-reviewer");
    }

    #[test]
    fn files_without_instructions_or_a_usable_name_are_refused() {
        assert!(parse("---\nname: x\n---\n").is_err());
        assert!(parse("---\nname: two words\n---\nDo it.").is_err());
        let (found, notes) = from_files([
            (PathBuf::from("/a/x.md"), Ok(b"one".to_vec())),
            (PathBuf::from("/b/x.md"), Ok(b"two".to_vec())),
            (PathBuf::from("/b/y.md"), Ok(b"\xff".to_vec())),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
