//! `--input-format stream-json`: the user's messages as JSON lines on
//! stdin, read while a run works, as Claude Code reads them:
//!
//! ```json
//! {"type": "user", "message": {"role": "user", "content": "Fix the test."}}
//! {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Also run clippy."}]}}
//! {"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}}
//! ```
//!
//! The first message is the task. One that arrives while a run works
//! joins the conversation before the next model call (the `user_message`
//! event says when); one that arrives between runs starts the next run of
//! the same session. `interrupt` interrupts the current run as Ctrl-C
//! does. The process ends when stdin closes and the last run is done. A
//! line that is not one of these is reported on stderr and skipped.

use kaizen_runtime::{CancellationToken, Inbox, RunResult};
use serde_json::Value;
use std::future::Future;
use std::io::BufRead;
use tokio::sync::mpsc;

/// One line of input.
#[derive(Debug, PartialEq)]
enum Input {
    /// A user message's text.
    User(String),
    /// Interrupt the current run.
    Interrupt,
}

/// Stdin, read on a thread of its own.
pub struct StreamInput {
    lines: mpsc::UnboundedReceiver<Input>,
    open: bool,
}

impl StreamInput {
    /// Starts reading stdin.
    pub fn start() -> Self {
        let (sender, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for (number, line) in std::io::stdin().lock().lines().enumerate() {
                let Ok(line) = line else { break };
                match parse(&line) {
                    Ok(Some(input)) => {
                        if sender.send(input).is_err() {
                            break;
                        }
                    }
                    Ok(None) => {}
                    Err(why) => eprintln!("kaizen: input line {} skipped: {why}", number + 1),
                }
            }
        });
        Self { lines, open: true }
    }

    /// The next user message, waiting for it; `None` once stdin closed.
    /// An interrupt with no run to interrupt is dropped.
    pub async fn next_message(&mut self) -> Option<String> {
        while self.open {
            match self.lines.recv().await {
                Some(Input::User(text)) => return Some(text),
                Some(Input::Interrupt) => {}
                None => self.open = false,
            }
        }
        None
    }

    /// Drives `run` to its end, moving the messages that arrive meanwhile
    /// into `inbox` and acting on interrupts.
    pub async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        inbox: &Inbox,
        interrupt: &CancellationToken,
    ) -> RunResult {
        let mut run = std::pin::pin!(run);
        loop {
            tokio::select! {
                result = &mut run => return result,
                input = self.lines.recv(), if self.open => match input {
                    Some(Input::User(text)) => inbox.send(text),
                    Some(Input::Interrupt) => interrupt.cancel(),
                    None => self.open = false,
                },
            }
        }
    }
}

/// One line: `Ok(None)` for a blank line or a message kind with nothing
/// to do here.
fn parse(line: &str) -> Result<Option<Input>, String> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(line).map_err(|err| format!("not JSON ({err})"))?;
    match value["type"].as_str() {
        Some("user") => {
            let content = &value["message"]["content"];
            let text = match content {
                Value::String(text) => text.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter(|block| block["type"] == "text")
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => {
                    return Err(
                        "a user message needs message.content (text, or text blocks)".into(),
                    );
                }
            };
            if text.trim().is_empty() {
                return Err("the user message has no text".into());
            }
            Ok(Some(Input::User(text)))
        }
        Some("control_request") => match value["request"]["subtype"].as_str() {
            Some("interrupt") => Ok(Some(Input::Interrupt)),
            other => Err(format!(
                "control request {} is not supported (only interrupt)",
                other.unwrap_or("without a subtype")
            )),
        },
        Some(other) => Err(format!(
            "messages of type `{other}` are not read here (user, control_request)"
        )),
        None => Err("a message needs a `type` (user, control_request)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_claude_code_writes_them() {
        let user = |text: &str| Ok(Some(Input::User(text.into())));
        assert_eq!(
            parse(r#"{"type":"user","message":{"role":"user","content":"Fix it."}}"#),
            user("Fix it.")
        );
        assert_eq!(
            parse(
                r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}"#
            ),
            user("a\nb")
        );
        assert_eq!(
            parse(
                r#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}"#
            ),
            Ok(Some(Input::Interrupt))
        );
        assert_eq!(parse("  "), Ok(None));
    }

    #[test]
    fn other_lines_say_why_they_are_skipped() {
        for (line, said) in [
            ("{not json", "not JSON"),
            (r#"{"type":"assistant"}"#, "`assistant` are not read here"),
            (r#"{"message":{}}"#, "needs a `type`"),
            (
                r#"{"type":"user","message":{"content":7}}"#,
                "needs message.content",
            ),
            (r#"{"type":"user","message":{"content":"  "}}"#, "no text"),
            (
                r#"{"type":"control_request","request":{"subtype":"set_model"}}"#,
                "set_model is not supported",
            ),
        ] {
            let err = parse(line).unwrap_err();
            assert!(err.contains(said), "{line}: {err}");
        }
    }
}
