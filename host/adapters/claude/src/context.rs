//! What a command's or skill's prompt gathers before it is sent, as in
//! Claude Code: `` !`git status` `` stands for that command's output, run
//! with the session's `Bash` (its rules, hooks and OS sandbox), and
//! `@src/lib.rs` brings that file, read with the session's `Read`, after
//! the prompt.
//!
//! Where the prompt is loaded by the model through the `Skill` tool
//! rather than typed, nothing runs inside that call: [`as_instructions`]
//! tells the model to run and read them itself, through the same tools.

use std::future::Future;
use std::pin::Pin;

/// Why a command could not run or a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatherError {
    /// There is no such file (an `@name` that is not a path is left alone).
    Missing,
    /// It was refused or failed; the message says why.
    Failed(String),
}

/// A command run or a file read for a prompt.
pub type GatherFuture<'a> = Pin<Box<dyn Future<Output = Result<String, GatherError>> + Send + 'a>>;

/// Runs commands and reads files for a prompt, through the session's
/// tools and guard.
pub trait Gatherer: Send + Sync {
    /// The output of shell command `command`.
    fn run<'a>(&'a self, command: &'a str) -> GatherFuture<'a>;
    /// The text of the file at `path` (as the prompt wrote it, relative to
    /// the working directory or absolute).
    fn read<'a>(&'a self, path: &'a str) -> GatherFuture<'a>;
}

/// The most files one prompt brings.
const MAX_FILES: usize = 10;

/// Whether `text` asks for anything to be gathered.
pub fn wants_gathering(text: &str) -> bool {
    !commands_in(text).is_empty() || !files_in(text).is_empty()
}

/// `text` with each `` !`command` `` replaced by its output and the files
/// it names with `@path` after it, each in a `<file>` block. A command
/// that fails or is refused leaves a note in its place, a file that cannot
/// be read a note after the prompt, so the model knows what is missing.
pub async fn gather(text: &str, gatherer: &dyn Gatherer) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (start, end, command) in commands_in(text) {
        out.push_str(&text[rest..start]);
        match gatherer.run(command).await {
            Ok(output) => out.push_str(output.trim_end()),
            Err(GatherError::Missing) => {
                out.push_str(&format!("[`{command}` did not run: there is no shell]"));
            }
            Err(GatherError::Failed(why)) => {
                out.push_str(&format!("[`{command}` did not run: {why}]"));
            }
        }
        rest = end;
    }
    out.push_str(&text[rest..]);
    let mut files = String::new();
    for path in files_in(text).into_iter().take(MAX_FILES) {
        match gatherer.read(path).await {
            Ok(content) => files.push_str(&format!(
                "\n\n<file path=\"{path}\">\n{}\n</file>",
                content.trim_end()
            )),
            Err(GatherError::Missing) => {}
            Err(GatherError::Failed(why)) => {
                files.push_str(&format!("\n\n[@{path} was not read: {why}]"));
            }
        }
    }
    out + &files
}

/// `text` for a model that loaded it through the `Skill` tool: each
/// `` !`command` `` and `@path` stays, with a word on running or reading
/// it with the session's tools, as nothing ran before this call.
pub fn as_instructions(text: &str) -> String {
    let commands = commands_in(text);
    let files = files_in(text);
    if commands.is_empty() && files.is_empty() {
        return text.to_string();
    }
    let mut note = String::from(
        "\n\n(Before following this, gather what it refers to with your tools, as its author \
         meant it to be gathered first:",
    );
    for (_, _, command) in &commands {
        note.push_str(&format!("\n- run `{command}` with Bash"));
    }
    for path in files.iter().take(MAX_FILES) {
        note.push_str(&format!("\n- read {path} with Read"));
    }
    note.push(')');
    format!("{text}{note}")
}

/// Each `` !`command` `` in `text`: where it starts and ends, and the
/// command (one line, not empty).
fn commands_in(text: &str) -> Vec<(usize, usize, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("!`").map(|i| i + from) {
        let body = at + 2;
        match text[body..].find('`').map(|i| i + body) {
            Some(close) if close > body && !text[body..close].contains('\n') => {
                let command = text[body..close].trim();
                if !command.is_empty() {
                    found.push((at, close + 1, command));
                }
                from = close + 1;
            }
            _ => from = body,
        }
    }
    found
}

/// Each `@path` in `text` that looks like a path (it holds a `/` or a
/// `.`, so `@here` or an address is left alone), at the start of the text
/// or after white space, without the punctuation that ends a sentence;
/// each once.
fn files_in(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', ';', ':', ')', '!', '?', '"', '\'', '.', '`']);
        let looks_like_a_path = path.contains(['/', '.']) && !path.contains('@');
        if looks_like_a_path && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Answers from a table, keeping what it was asked.
    #[derive(Default)]
    struct Table {
        asked: Mutex<Vec<String>>,
    }

    impl Gatherer for Table {
        fn run<'a>(&'a self, command: &'a str) -> GatherFuture<'a> {
            self.asked.lock().unwrap().push(format!("run {command}"));
            Box::pin(async move {
                match command {
                    "git status" => Ok("On branch main\n".into()),
                    _ => Err(GatherError::Failed("denied by `Bash(rm:*)`".into())),
                }
            })
        }
        fn read<'a>(&'a self, path: &'a str) -> GatherFuture<'a> {
            self.asked.lock().unwrap().push(format!("read {path}"));
            Box::pin(async move {
                match path {
                    "src/lib.rs" => Ok("     1\tfn main() {}\n".into()),
                    ".env" => Err(GatherError::Failed("denied by `Read(./.env)`".into())),
                    _ => Err(GatherError::Missing),
                }
            })
        }
    }

    #[tokio::test]
    async fn commands_give_their_output_and_files_follow_the_prompt() {
        let table = Table::default();
        let text = "Status: !`git status`\nThen !`rm -rf x`. Look at @src/lib.rs, not @.env; \
                    ask @alice or mail a@b.c about @gone.txt. Keep `code` and !`` as they are.";
        let out = gather(text, &table).await;
        assert!(out.starts_with("Status: On branch main\nThen [`rm -rf x` did not run: denied by `Bash(rm:*)`]. Look at @src/lib.rs"), "{out}");
        assert!(out.contains("Keep `code` and !`` as they are."), "{out}");
        assert!(
            out.ends_with(
                "<file path=\"src/lib.rs\">\n     1\tfn main() {}\n</file>\n\n[@.env was not \
                 read: denied by `Read(./.env)`]"
            ),
            "{out}"
        );
        assert_eq!(
            *table.asked.lock().unwrap(),
            [
                "run git status",
                "run rm -rf x",
                "read src/lib.rs",
                "read .env",
                "read gone.txt"
            ]
        );
    }

    #[test]
    fn loaded_by_the_model_the_prompt_says_what_to_gather() {
        let text = "Review !`git diff HEAD` and @docs/guide.md.";
        let out = as_instructions(text);
        assert!(out.starts_with(text));
        assert!(out.contains("- run `git diff HEAD` with Bash\n- read docs/guide.md with Read)"));
        assert_eq!(as_instructions("Plain $5 text."), "Plain $5 text.");
        assert!(wants_gathering(text) && !wants_gathering("a@b.c and `x`"));
    }

    #[test]
    fn every_cut_of_a_prompt_is_read_without_panicking() {
        let text = "é !`ls` @a/b.rs !`unclosed @x.y\n`";
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let _ = (commands_in(&text[..end]), files_in(&text[..end]));
        }
        assert_eq!(commands_in(text).len(), 1);
    }
}
