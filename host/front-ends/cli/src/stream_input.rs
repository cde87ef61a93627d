//! `--input-format stream-json`: the user's messages as JSON lines on
//! stdin, read while a run works, as Claude Code reads them:
//!
//! ```json
//! {"type": "user", "message": {"role": "user", "content": "Fix the test."}}
//! {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Also run clippy."}]}}
//! {"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}}
//! {"type": "control_request", "request_id": "r2", "request": {"subtype": "compact"}}
//! {"type": "control_response", "response": {"subtype": "success", "request_id": "kaizen-1", "response": {"behavior": "allow"}}}
//! ```
//!
//! The first message is the task. One that arrives while a run works
//! joins the conversation before the next model call (the `user_message`
//! event says when); one that arrives between runs starts the next run of
//! the same session. `interrupt` interrupts the current run as Ctrl-C
//! does; `compact` compacts the conversation before the next model call
//! (as `kaizen sessions compact` does). A tool call that needs approval is asked on stdout as Claude
//! Code's SDK asks (`{"type": "control_request", "request_id",
//! "request": {"subtype": "can_use_tool", "tool_name", "input", ...}}`)
//! and answered by a `control_response` with that id: `behavior` `allow`
//! (with `updatedPermissions`, from now on) or `deny` (with a `message`
//! for the model). The process ends when stdin closes and the last run is
//! done. A line that is not one of these is reported on stderr and
//! skipped.

use crate::output::Printer;
use kaizen_app::run::NextTasks;
use kaizen_loop::Inbox;
use kaizen_protocol::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, RunResult,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::future::Future;
use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// One line of input.
#[derive(Debug, PartialEq)]
enum Input {
    /// A user message's text.
    User(String),
    /// Interrupt the current run.
    Interrupt,
    /// Compact the conversation before the next model call.
    Compact,
    /// The answer to the approval asked under this id.
    Answer(String, Approval),
}

/// Stdin, read on a thread of its own.
pub struct StreamInput {
    lines: mpsc::UnboundedReceiver<Input>,
    open: bool,
    questions: Questions,
    /// A compaction asked for between runs, for the next one.
    compact_next: bool,
}

/// The approvals asked and not yet answered, by request id.
type Questions = Arc<Mutex<HashMap<String, oneshot::Sender<Approval>>>>;

/// Asks the embedding program about tool calls, over stdout and stdin.
pub struct StreamApprover {
    printer: Arc<Printer>,
    questions: Questions,
    next: AtomicU64,
}

impl Approver for StreamApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let id = format!("kaizen-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
            let (answer, answered) = oneshot::channel();
            lock(&self.questions).insert(id.clone(), answer);
            self.printer.line(&json!({
                "type": "control_request",
                "request_id": id,
                "request": {
                    "subtype": "can_use_tool",
                    "tool_name": request.tool,
                    "input": request.input,
                    "reason": request.reason,
                    "always_rule": request.always_rule,
                    "agent": request.agent,
                },
            }));
            answered.await.unwrap_or_else(|_| {
                Approval::Deny("nobody answered: the input stream closed".into())
            })
        })
    }
}

fn lock(
    questions: &Questions,
) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Approval>>> {
    questions.lock().unwrap_or_else(|e| e.into_inner())
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
        Self {
            lines,
            open: true,
            questions: Questions::default(),
            compact_next: false,
        }
    }

    /// The approver whose questions this input's answers settle.
    pub fn approver(&self, printer: Arc<Printer>) -> StreamApprover {
        StreamApprover {
            printer,
            questions: self.questions.clone(),
            next: AtomicU64::new(0),
        }
    }

    /// Settles the question `id`; an answer to nothing asked is reported.
    fn answer(&self, id: &str, approval: Approval) {
        match lock(&self.questions).remove(id) {
            Some(asked) => {
                let _ = asked.send(approval);
            }
            None => eprintln!("kaizen: an answer to `{id}` came, which nothing asked; skipped"),
        }
    }

    /// The next user message, waiting for it; `None` once stdin closed.
    /// An interrupt with no run to interrupt is dropped.
    pub async fn next_message(&mut self) -> Option<String> {
        while self.open {
            match self.lines.recv().await {
                Some(Input::User(text)) => return Some(text),
                Some(Input::Interrupt) => {}
                Some(Input::Compact) => self.compact_next = true,
                Some(Input::Answer(id, approval)) => self.answer(&id, approval),
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
        if std::mem::take(&mut self.compact_next) {
            inbox.request_compaction();
        }
        let mut run = std::pin::pin!(run);
        loop {
            tokio::select! {
                result = &mut run => return result,
                input = self.lines.recv(), if self.open => match input {
                    Some(Input::User(text)) => inbox.send(text),
                    Some(Input::Interrupt) => interrupt.cancel(),
                    Some(Input::Compact) => inbox.request_compaction(),
                    Some(Input::Answer(id, approval)) => self.answer(&id, approval),
                    None => {
                        self.open = false;
                        // Questions nobody can answer now are refused.
                        lock(&self.questions).clear();
                    }
                },
            }
        }
    }
}

/// The session's next tasks: the messages that come between runs; while
/// a run works, what comes goes to the session's inbox.
impl NextTasks for StreamInput {
    async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        inbox: Option<&Inbox>,
        interrupt: &CancellationToken,
    ) -> RunResult {
        match inbox {
            Some(inbox) => StreamInput::drive(self, run, inbox, interrupt).await,
            None => run.await,
        }
    }

    async fn next(&mut self) -> Option<String> {
        self.next_message().await
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
            // Claude Code's built-in `/compact`, as the Agent SDK sends it:
            // compaction before the next model call, not a task.
            if text.trim() == "/compact" {
                return Ok(Some(Input::Compact));
            }
            Ok(Some(Input::User(text)))
        }
        Some("control_response") => answer(&value["response"]).map(Some),
        Some("control_request") => match value["request"]["subtype"].as_str() {
            Some("interrupt") => Ok(Some(Input::Interrupt)),
            Some("compact") => Ok(Some(Input::Compact)),
            other => Err(format!(
                "control request {} is not supported (interrupt, compact)",
                other.unwrap_or("without a subtype")
            )),
        },
        Some(other) => Err(format!(
            "messages of type `{other}` are not read here (user, control_request, control_response)"
        )),
        None => Err("a message needs a `type` (user, control_request, control_response)".into()),
    }
}

/// A `control_response`'s `response`: the id it answers and the approval.
fn answer(response: &Value) -> Result<Input, String> {
    let id = response["request_id"]
        .as_str()
        .ok_or("a control_response needs response.request_id")?;
    let answer = &response["response"];
    let approval = match (response["subtype"].as_str(), answer["behavior"].as_str()) {
        (Some("error"), _) => Approval::Deny(
            response["error"]
                .as_str()
                .unwrap_or("the embedder could not answer")
                .to_string(),
        ),
        (_, Some("allow")) => match answer["updatedPermissions"].as_array() {
            Some(rules) if !rules.is_empty() => Approval::Always,
            _ => Approval::Once,
        },
        (_, Some("deny")) => {
            Approval::Deny(answer["message"].as_str().unwrap_or_default().to_string())
        }
        _ => {
            return Err(
                "a control_response answers with response.behavior `allow` or `deny`".into(),
            );
        }
    };
    Ok(Input::Answer(id.to_string(), approval))
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
        assert_eq!(
            parse(r#"{"type":"user","message":{"role":"user","content":" /compact "}}"#),
            Ok(Some(Input::Compact))
        );
        assert_eq!(
            parse(r#"{"type":"user","message":{"role":"user","content":"/compact now"}}"#),
            user("/compact now")
        );
        let answer = |response: Value| {
            parse(&json!({"type": "control_response", "response": response}).to_string())
        };
        assert_eq!(
            answer(
                json!({"subtype": "success", "request_id": "k1", "response": {"behavior": "allow", "updatedInput": {}}})
            ),
            Ok(Some(Input::Answer("k1".into(), Approval::Once)))
        );
        assert_eq!(
            answer(
                json!({"subtype": "success", "request_id": "k2", "response": {"behavior": "allow", "updatedPermissions": [{"type": "addRules"}]}})
            ),
            Ok(Some(Input::Answer("k2".into(), Approval::Always)))
        );
        assert_eq!(
            answer(
                json!({"subtype": "success", "request_id": "k3", "response": {"behavior": "deny", "message": "Use git."}})
            ),
            Ok(Some(Input::Answer(
                "k3".into(),
                Approval::Deny("Use git.".into())
            )))
        );
        assert!(answer(json!({"subtype": "success", "response": {"behavior": "allow"}})).is_err());
        assert!(answer(json!({"subtype": "success", "request_id": "k4", "response": {}})).is_err());
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
