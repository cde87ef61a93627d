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
//! the same session. Control requests (`initialize`, `interrupt`,
//! `set_permission_mode`, `compact`) are answered as Claude Code answers
//! them, and a tool call that needs approval is asked as Claude Code asks
//! its SDK ([`crate::stream_control`]). The process ends when stdin
//! closes and the last run is done. A line that is not one of these is
//! reported on stderr and skipped.

use crate::output::Printer;
use crate::stream_approver::StreamApprover;
use crate::stream_control::{
    self, Channel, Control, Handshake, Pending, Request, initialize_answer,
};
use kaizen_app::run::NextTasks;
use kaizen_loop::Inbox;
use kaizen_protocol::{CancellationToken, RunResult};
use serde_json::{Value, json};
use std::future::Future;
use std::io::BufRead;
use std::sync::Arc;
use tokio::sync::mpsc;

/// One line of input.
#[derive(Debug, PartialEq)]
enum Input {
    /// A user message's text.
    User(String),
    /// `/compact [instructions]` as a user message: compact the
    /// conversation before the next model call, its summary keeping what
    /// the instructions say.
    Compact(Option<String>),
    /// A control request from the program.
    Control(Control),
}

/// Stdin, read on a thread of its own.
pub struct StreamInput {
    lines: mpsc::UnboundedReceiver<Input>,
    open: bool,
    /// Where control requests are answered.
    printer: Arc<Printer>,
    /// Where Kaizen asks the program.
    channel: Channel,
    /// The run's interrupt, for a refusal that asks for one.
    interrupt: CancellationToken,
    /// The session's inbox: messages while a run works, and compactions
    /// and modes asked for at any time (a run takes them at its next
    /// model call, or the next run at its first).
    inbox: Inbox,
    /// What the program's handshake asked of the session, until the
    /// session takes it.
    handshake: Option<Handshake>,
}

impl StreamInput {
    /// Starts reading stdin; control requests are answered on `printer`,
    /// and Kaizen's own requests are asked there. Answers to those go
    /// straight to what asked them, even while the session is being set
    /// up (its MCP servers in the program answer then).
    pub fn start(printer: Arc<Printer>, interrupt: CancellationToken) -> Self {
        let (sender, lines) = mpsc::unbounded_channel();
        let pending = Pending::default();
        let answers = pending.clone();
        std::thread::spawn(move || {
            for (number, line) in std::io::stdin().lock().lines().enumerate() {
                let Ok(line) = line else { break };
                let read = match parse(&line) {
                    Ok(Some(Line::Input(input))) => {
                        if sender.send(input).is_err() {
                            break;
                        }
                        Ok(())
                    }
                    Ok(Some(Line::Answer(response))) => answers.deliver(response),
                    Ok(None) => Ok(()),
                    Err(why) => Err(why),
                };
                if let Err(why) = read {
                    eprintln!("kaizen: input line {} skipped: {why}", number + 1);
                }
            }
            // Nobody is left to answer what Kaizen asked.
            answers.abandon_all();
        });
        Self {
            lines,
            open: true,
            channel: Channel::new(printer.clone(), pending),
            printer,
            interrupt,
            inbox: Inbox::default(),
            handshake: None,
        }
    }

    /// The session's inbox, which this input fills.
    pub fn inbox(&self) -> Inbox {
        self.inbox.clone()
    }

    /// What the program's handshake asked of the session, once (read it
    /// after the first message: the handshake comes before it).
    pub fn take_handshake(&mut self) -> Option<Handshake> {
        self.handshake.take()
    }

    /// The approver whose questions this input's answers settle.
    pub fn approver(&self) -> StreamApprover {
        StreamApprover::new(self.channel.clone(), self.interrupt.clone())
    }

    /// Where the program's own MCP servers are reached.
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// The next user message, waiting for it (and answering control
    /// requests meanwhile); `None` once stdin closed. An interrupt with
    /// no run to interrupt is answered and does nothing.
    pub async fn next_message(&mut self) -> Option<String> {
        while self.open {
            match self.lines.recv().await {
                Some(Input::User(text)) => return Some(text),
                Some(Input::Compact(instructions)) => self.inbox.request_compaction(instructions),
                Some(Input::Control(control)) => self.control(control, None),
                None => self.open = false,
            }
        }
        None
    }

    /// Drives `run` to its end, moving the messages that arrive meanwhile
    /// into the inbox and acting on control requests.
    pub async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        interrupt: &CancellationToken,
    ) -> RunResult {
        let mut run = std::pin::pin!(run);
        loop {
            tokio::select! {
                result = &mut run => return result,
                input = self.lines.recv(), if self.open => match input {
                    Some(Input::User(text)) => self.inbox.send(text),
                    Some(Input::Compact(instructions)) => {
                        self.inbox.request_compaction(instructions)
                    }
                    Some(Input::Control(control)) => self.control(control, Some(interrupt)),
                    None => self.open = false,
                },
            }
        }
    }

    /// Does what a control request asks, on the run if one is going, and
    /// answers it (a request without an id is answered on stderr only
    /// when it fails).
    fn control(&mut self, control: Control, running: Option<&CancellationToken>) {
        let answer = control.request.map(|request| self.act(request, running));
        match (control.id, answer) {
            (Some(id), answer) => stream_control::respond(&self.printer, &id, answer),
            (None, Err(why)) => eprintln!("kaizen: control request skipped: {why}"),
            (None, Ok(_)) => {}
        }
    }

    /// Does what `request` asks; `running` is the interrupt of the run
    /// going, if one is (an interrupt with no run does nothing).
    fn act(&mut self, request: Request, running: Option<&CancellationToken>) -> Value {
        match request {
            Request::Initialize(handshake) => {
                self.handshake = Some(*handshake);
                return initialize_answer();
            }
            Request::Interrupt => running.into_iter().for_each(CancellationToken::cancel),
            Request::Compact(instructions) => self.inbox.request_compaction(instructions),
            Request::SetMode(mode) => self.inbox.request_mode(mode),
        }
        json!({})
    }
}

/// The session's next tasks: the messages that come between runs; while
/// a run works, what comes goes to the session's inbox.
impl NextTasks for StreamInput {
    async fn drive(
        &mut self,
        run: impl Future<Output = RunResult>,
        _inbox: Option<&Inbox>,
        interrupt: &CancellationToken,
    ) -> RunResult {
        // The session's inbox is this input's own (see `inbox`).
        StreamInput::drive(self, run, interrupt).await
    }

    async fn next(&mut self) -> Option<String> {
        self.next_message().await
    }
}

/// A line read: input for the session, or the answer to a request of
/// Kaizen's (a `control_response`'s `response`).
#[derive(Debug, PartialEq)]
enum Line {
    Input(Input),
    Answer(Value),
}

/// One line: `Ok(None)` for a blank line or a message kind with nothing
/// to do here.
fn parse(line: &str) -> Result<Option<Line>, String> {
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
            // Claude Code's built-in `/compact [instructions]`, as the
            // Agent SDK sends it: compaction before the next model call,
            // not a task.
            if let Some(rest) = text.trim().strip_prefix("/compact")
                && (rest.is_empty() || rest.starts_with(char::is_whitespace))
            {
                let instructions = Some(rest.trim().to_string()).filter(|r| !r.is_empty());
                return Ok(Some(Line::Input(Input::Compact(instructions))));
            }
            Ok(Some(Line::Input(Input::User(text))))
        }
        Some("control_response") => Ok(Some(Line::Answer(value["response"].clone()))),
        Some("control_request") => {
            let id = value["request_id"].as_str().map(str::to_string);
            let control = stream_control::read_request(id, &value["request"]);
            Ok(Some(Line::Input(Input::Control(control))))
        }
        // The SDKs' keep-alive pings need no answer.
        Some("keep_alive") => Ok(None),
        Some(other) => Err(format!(
            "messages of type `{other}` are not read here (user, control_request, control_response)"
        )),
        None => Err("a message needs a `type` (user, control_request, control_response)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_claude_code_writes_them() {
        let user = |text: &str| Ok(Some(Line::Input(Input::User(text.into()))));
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
            Ok(Some(Line::Input(Input::Control(Control {
                id: Some("r1".into()),
                request: Ok(Request::Interrupt)
            }))))
        );
        assert_eq!(parse("  "), Ok(None));
        assert_eq!(
            parse(r#"{"type":"user","message":{"role":"user","content":" /compact "}}"#),
            Ok(Some(Line::Input(Input::Compact(None))))
        );
        assert_eq!(
            parse(
                r#"{"type":"user","message":{"role":"user","content":"/compact Keep the API."}}"#
            ),
            Ok(Some(Line::Input(Input::Compact(Some(
                "Keep the API.".into()
            )))))
        );
        assert_eq!(
            parse(r#"{"type":"user","message":{"role":"user","content":"/compactly"}}"#),
            user("/compactly")
        );
        let answered = parse(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"k1","response":{"behavior":"allow"}}}"#,
        );
        assert!(
            matches!(answered, Ok(Some(Line::Answer(ref response))) if response["request_id"] == "k1")
        );
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
        ] {
            let err = parse(line).unwrap_err();
            assert!(err.contains(said), "{line}: {err}");
        }
    }
}
