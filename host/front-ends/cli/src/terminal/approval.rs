//! Tool-call approval on the terminal: allow once, allow always (kept as
//! a rule in the user's config), or refuse with a word for the model.

use super::{TerminalInteraction, prompt, say};
use anyhow::Context as _;
use kaizen_protocol::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use std::path::PathBuf;
use std::sync::Arc;

/// Asks the person at the terminal about tool calls, one at a time (the
/// same turn as plugins' questions), and keeps "always" answers in
/// `config` (the user's `config.toml`) under `[permissions] allow`.
pub struct TerminalApprover {
    terminal: Arc<TerminalInteraction>,
    /// `None` for a run elsewhere (a cluster's): "always" holds for the
    /// rest of that turn, and nothing is kept here.
    config: Option<PathBuf>,
}

impl TerminalApprover {
    /// Asks on `terminal`; keeps rules in `config`.
    pub fn new(terminal: Arc<TerminalInteraction>, config: PathBuf) -> Self {
        Self {
            terminal,
            config: Some(config),
        }
    }

    /// Asks on `terminal` for a turn that runs elsewhere: nothing is
    /// kept in this machine's config.
    pub fn for_elsewhere(terminal: Arc<TerminalInteraction>) -> Self {
        Self {
            terminal,
            config: None,
        }
    }

    async fn ask(&self, request: &ApprovalRequest) -> Approval {
        let terminal = &self.terminal;
        let _turn = terminal.turn.lock().await;
        let _open = terminal.prompting();
        let kept = self
            .config
            .as_ref()
            .map(|config| config.display().to_string());
        say(&render(request, kept.as_deref()));
        loop {
            say("> ");
            let read = tokio::select! {
                read = terminal.reader.read_line() => read,
                () = terminal.interrupt.cancelled() => {
                    say("\n(interrupted)\n");
                    return Approval::Deny("the user interrupted the run".into());
                }
            };
            let line = match read {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => {
                    say("\n(declined)\n");
                    return Approval::Deny(String::new());
                }
            };
            match parse(&line) {
                Some(Approval::Always) => {
                    let kept = match &self.config {
                        Some(config) => keep_rule(config, &request.always_rule),
                        None => Ok(()),
                    };
                    if let Err(err) = kept {
                        say(&format!(
                            "\x1b[33mallowed for this session only: {err:#}\x1b[0m\n"
                        ));
                    }
                    say("\n");
                    return Approval::Always;
                }
                Some(answer) => {
                    say("\n");
                    return answer;
                }
                None => say("\x1b[33mAnswer 1, 2 or 3 (3 may be followed by a reason).\x1b[0m\n"),
            }
        }
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(self.ask(request))
    }
}

/// The question, with the call's input shown safely (no terminal escapes
/// from model text) and briefly; "always" is kept in `config`, or holds
/// for the rest of the turn without one.
pub fn render(request: &ApprovalRequest, config: Option<&str>) -> String {
    let who = match &request.agent {
        Some(agent) => format!(" (for a {} sub-agent)", prompt::clean(agent)),
        None => String::new(),
    };
    let level = match request.danger {
        Some(danger) => format!(" [{}]", danger.name().to_ascii_uppercase()),
        None => String::new(),
    };
    let input = prompt::clipped(&request.input.to_string(), 600);
    let lasting = match config {
        Some(config) => format!("from now on (kept in {config})"),
        None => "for the rest of this turn".into(),
    };
    format!(
        "\n\x1b[1mKaizen wants to run {tool}{level}{who}\x1b[0m: {input}\n\x1b[2m{reason}\x1b[0m\n  \
         1. Yes\n  2. Yes, and allow `{rule}` {lasting}\n  \
         3. No (type a reason after 3 to tell the model what to do instead)\n",
        tool = prompt::clean(&request.tool),
        reason = prompt::clean(&request.reason),
        rule = prompt::clean(&request.always_rule),
    )
}

/// `1`/`y`/`yes`, `2`/`a`/`always`, `3`/`n`/`no` with an optional reason.
pub fn parse(line: &str) -> Option<Approval> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    match word.to_ascii_lowercase().as_str() {
        "1" | "y" | "yes" if rest.is_empty() => Some(Approval::Once),
        "2" | "a" | "always" if rest.is_empty() => Some(Approval::Always),
        "3" | "n" | "no" => Some(Approval::Deny(rest.trim().to_string())),
        _ => None,
    }
}

/// Adds `rule` to `[permissions] allow` in the config file at `path`,
/// keeping the rest of the file as it is.
pub fn keep_rule(path: &std::path::Path, rule: &str) -> anyhow::Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", path.display()))?;
    let permissions = doc
        .entry("permissions")
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .with_context(|| format!("{}: `permissions` is not a table", path.display()))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| toml_edit::value(toml_edit::Array::new()))
        .as_array_mut()
        .with_context(|| format!("{}: `permissions.allow` is not a list", path.display()))?;
    if !allow.iter().any(|value| value.as_str() == Some(rule)) {
        allow.push(rule);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let temp = path.with_extension("toml.tmp");
    std::fs::write(&temp, doc.to_string())
        .with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("replacing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_parse_and_garbage_asks_again() {
        assert_eq!(parse("1\n"), Some(Approval::Once));
        assert_eq!(parse(" y "), Some(Approval::Once));
        assert_eq!(parse("2"), Some(Approval::Always));
        assert_eq!(parse("3"), Some(Approval::Deny(String::new())));
        assert_eq!(
            parse("3 use make instead"),
            Some(Approval::Deny("use make instead".into()))
        );
        assert_eq!(
            parse("no  not now "),
            Some(Approval::Deny("not now".into()))
        );
        assert_eq!(parse(""), None);
        assert_eq!(parse("1 please"), None);
        assert_eq!(parse("maybe"), None);
    }

    #[test]
    fn the_question_shows_the_call_without_escapes() {
        let request = ApprovalRequest {
            tool: "Bash".into(),
            input: json!({"command": "echo \u{1b}[2Jgone"}),
            reason: "it needs approval".into(),
            always_rule: "Bash(echo hi)".into(),
            danger: Some(kaizen_protocol::Danger::High),
            agent: Some("Explore".into()),
            call_id: "c1".into(),
        };
        let text = render(&request, Some("/home/u/.local/share/kaizen/config.toml"));
        assert!(
            text.contains("Kaizen wants to run Bash [HIGH] (for a Explore sub-agent)"),
            "{text}"
        );
        assert!(!text.contains("\u{1b}[2J"), "{text:?}");
        assert!(text.contains("`Bash(echo hi)`") && text.contains("config.toml"));
        let elsewhere = render(&request, None);
        assert!(
            elsewhere.contains("for the rest of this turn"),
            "{elsewhere}"
        );
    }

    #[test]
    fn always_rules_are_kept_in_the_users_config() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# mine\n[plugins]\nmax-memory-mib = 512\n").unwrap();
        keep_rule(&path, "Bash(make test)").unwrap();
        keep_rule(&path, "Bash(make test)").unwrap();
        keep_rule(&path, "WebFetch(domain:docs.rs)").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\n"), "{text}");
        let config: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(
            config["permissions"]["allow"],
            toml::Value::Array(vec![
                "Bash(make test)".into(),
                "WebFetch(domain:docs.rs)".into()
            ])
        );
        assert_eq!(config["plugins"]["max-memory-mib"].as_integer(), Some(512));
    }
}
