//! The system prompt: who the agent is, where it works, and the project's
//! own instructions.

use std::path::Path;

/// Files whose contents are the project's instructions to the agent, in
/// the order they are included.
pub const INSTRUCTION_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "KAIZEN.md"];

/// Instruction files larger than this are cut, so a huge file cannot eat
/// the context window.
const MAX_INSTRUCTIONS_BYTES: usize = 64 << 10;

/// Builds the system prompt for a session in `workspace` on `date`
/// (`YYYY-MM-DD`).
pub fn system_prompt(workspace: &Path, date: &str) -> String {
    let mut prompt = format!(
        "You are Kaizen, an autonomous software engineering agent. You work on the user's task \
         by calling the tools you are given until it is done, then answer with a short summary \
         of what you did and what you found. Do not ask for confirmation; act. When a tool \
         fails, read its error, fix the call and go on.\n\n\
         # Environment\n\
         Working directory: {}\n\
         Platform: {}\n\
         Today's date: {date}\n\
         Use absolute paths with file tools. You can only reach the files and hosts your tools \
         were granted.\n",
        workspace.display(),
        std::env::consts::OS,
    );
    for name in INSTRUCTION_FILES {
        let path = workspace.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let text = cut_to(&text, MAX_INSTRUCTIONS_BYTES);
        prompt.push_str(&format!(
            "\n# Project instructions ({name})\n{}\n",
            text.trim_end()
        ));
    }
    prompt
}

/// `text` cut at a character boundary to at most `max` bytes.
fn cut_to(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Today's date in the local time zone.
pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_names_the_workspace_platform_date_and_instructions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("AGENTS.md"),
            "Run `make test` before answering.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("KAIZEN.md"), "Use tabs.").unwrap();
        let prompt = system_prompt(dir.path(), "2026-11-22");
        assert!(prompt.contains(&format!("Working directory: {}", dir.path().display())));
        assert!(prompt.contains("Platform: linux"));
        assert!(prompt.contains("Today's date: 2026-11-22"));
        let agents = prompt.find("Run `make test` before answering.").unwrap();
        let kaizen = prompt.find("Use tabs.").unwrap();
        assert!(agents < kaizen, "instruction files keep their order");
        assert!(!prompt.contains("CLAUDE.md"));
    }

    #[test]
    fn cutting_respects_char_boundaries() {
        assert_eq!(cut_to("héllo", 2), "h");
        assert_eq!(cut_to("abc", 10), "abc");
    }
}
