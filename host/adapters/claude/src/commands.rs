//! Claude Code's custom slash commands: a Markdown file per command, in
//! `.claude/commands/` or `~/.claude/commands/` (subfolders group them;
//! the file's name is the command's). Its front matter may say what it
//! does (`description`), what arguments it takes (`argument-hint`), which
//! tools it needs (`allowed-tools`) and its `model`; its body is a prompt
//! in which `$ARGUMENTS` stands for everything after the command's name
//! and `$1` … `$9` for each word of it.
//!
//! A command runs two ways, as in Claude Code 2.1: typed as `/name args`
//! at the start of a task (the task becomes the command's prompt), or
//! called by the model through the `Skill` tool, which lists commands
//! beside skills.

use std::path::{Path, PathBuf};

use crate::front_matter::{self, MAX_DESCRIPTION_CHARS, first_paragraph, one_line, split_tools};

/// The longest `argument-hint` kept (it is listed with the description).
const MAX_HINT_CHARS: usize = 200;

/// One slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    /// Its name: the file's, without `.md`.
    pub name: String,
    /// What it does (the front matter's, else its body's first paragraph).
    pub description: String,
    /// `argument-hint`: what to type after its name.
    pub argument_hint: Option<String>,
    /// `allowed-tools`: permission rules for the calls it may make once
    /// loaded (the loop refuses the others until the next task).
    pub allowed_tools: Vec<String>,
    /// The file it comes from.
    pub path: PathBuf,
    /// Its prompt, before its arguments are put in.
    pub body: String,
}

impl SlashCommand {
    /// Reads the command file `path` holding `text`. Errs, saying why,
    /// when it is not UTF-8 or its name cannot be typed as a command.
    pub fn parse(text: &[u8], path: &Path) -> Result<SlashCommand, String> {
        let text = std::str::from_utf8(text).map_err(|_| "it is not UTF-8".to_string())?;
        let name = path
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !valid_name(&name) {
            return Err(format!(
                "its name {name:?} is not letters, digits, `-`, `_`, `.` and `:`"
            ));
        }
        let (fields, body) = front_matter::read(text);
        let field = |key: &str| front_matter::field(&fields, key);
        let description = field("description")
            .map(|v| v.join(" "))
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| first_paragraph(body));
        Ok(SlashCommand {
            name,
            description: one_line(&description, MAX_DESCRIPTION_CHARS),
            argument_hint: front_matter::raw(&fields, "argument-hint")
                .map(|h| one_line(&h, MAX_HINT_CHARS))
                .filter(|h| !h.is_empty()),
            allowed_tools: field("allowed-tools")
                .unwrap_or_default()
                .iter()
                .flat_map(|v| split_tools(v))
                .collect(),
            path: path.to_path_buf(),
            body: body.trim_start_matches(['\n', '\r']).to_string(),
        })
    }

    /// Its prompt for `args`: `$ARGUMENTS` is all of them, `$1` … `$9`
    /// each word (missing ones are empty); a prompt that names none gets
    /// the arguments after it.
    pub fn expand(&self, args: &str) -> String {
        let args = args.trim();
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut out = String::with_capacity(self.body.len() + args.len());
        let mut used = false;
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(args);
                used = true;
                rest = tail;
            } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
                let n = d as usize - '1' as usize;
                out.push_str(words.get(n).copied().unwrap_or(""));
                used = true;
                rest = &after[1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        if !used && !args.is_empty() {
            out.push_str(&format!("\n\nARGUMENTS: {args}"));
        }
        out
    }
}

/// Whether `name` can be typed after `/`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// `/name args` at the start of `text`: the name and the arguments.
/// Anything else (a path such as `/usr/bin`, a bare `/`) is not one.
pub fn invocation(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    valid_name(name).then(|| (name, rest[end..].trim()))
}

/// The commands in `dir` and its subfolders (`*.md`), read from disk; with
/// a note for each one that cannot be used.
pub fn from_dir(dir: &Path) -> (Vec<SlashCommand>, Vec<String>) {
    from_files(front_matter::read_markdown_files(dir, 4))
}

/// The commands in `files` (`(path, its bytes or why not)`), with a note
/// for each one that cannot be used. The first of a name wins.
pub fn from_files(
    files: impl IntoIterator<Item = (PathBuf, std::io::Result<Vec<u8>>)>,
) -> (Vec<SlashCommand>, Vec<String>) {
    front_matter::read_each(files, "command", SlashCommand::parse, |c| &c.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(text: &str) -> SlashCommand {
        SlashCommand::parse(
            text.as_bytes(),
            Path::new("/w/.claude/commands/fix-issue.md"),
        )
        .unwrap()
    }

    #[test]
    fn reads_claude_codes_command_files() {
        let c = command(
            "---\ndescription: Fix a GitHub issue\nargument-hint: [issue-number] [priority]\n\
             allowed-tools: Bash(git add:*), Bash(git commit:*)\n---\nFix issue #$1 with priority $2.\n",
        );
        assert_eq!(c.name, "fix-issue");
        assert_eq!(c.description, "Fix a GitHub issue");
        assert_eq!(
            c.argument_hint.as_deref(),
            Some("[issue-number] [priority]")
        );
        assert_eq!(c.allowed_tools, ["Bash(git add:*)", "Bash(git commit:*)"]);
        assert_eq!(c.expand("123 high"), "Fix issue #123 with priority high.\n");
        assert_eq!(c.expand("123"), "Fix issue #123 with priority .\n");
        let plain = command("Review the code.\n\nCarefully.");
        assert_eq!(plain.description, "Review the code.");
        assert_eq!(plain.expand(""), "Review the code.\n\nCarefully.");
        assert_eq!(
            plain.expand("src/x.rs"),
            "Review the code.\n\nCarefully.\n\nARGUMENTS: src/x.rs"
        );
        let all = command("Explain $ARGUMENTS; costs $5 and $HOME stay.");
        assert_eq!(all.expand("a b"), "Explain a b; costs  and $HOME stay.");
    }

    #[test]
    fn an_invocation_is_a_name_after_a_slash() {
        assert_eq!(
            invocation("/fix-issue 123 high"),
            Some(("fix-issue", "123 high"))
        );
        assert_eq!(invocation("  /review"), Some(("review", "")));
        assert_eq!(invocation("/usr/bin is broken"), None);
        assert_eq!(invocation("/ x"), None);
        assert_eq!(invocation("fix /this"), None);
    }

    #[test]
    fn commands_are_found_in_subfolders_and_the_first_of_a_name_wins() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("frontend")).unwrap();
        std::fs::write(dir.path().join("frontend/component.md"), "Make a component").unwrap();
        std::fs::write(dir.path().join("review.md"), "Review").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a command").unwrap();
        std::fs::write(dir.path().join("bad name.md"), "x").unwrap();
        let (found, notes) = from_dir(dir.path());
        let names: Vec<&str> = found.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["component", "review"]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let (found, notes) = from_files([
            (PathBuf::from("/a/x.md"), Ok(b"one".to_vec())),
            (PathBuf::from("/b/x.md"), Ok(b"two".to_vec())),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].body, "one");
        assert!(notes[0].contains("named x already"), "{notes:?}");
    }
}
