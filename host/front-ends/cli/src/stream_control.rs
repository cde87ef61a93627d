//! The control protocol of stream-json input, as Claude Code's Agent SDKs
//! speak it: requests from the program (`initialize`, `interrupt`,
//! `set_permission_mode`, `compact`), each answered by a
//! `control_response` with its `request_id`; and Kaizen's own questions
//! to the program (`can_use_tool`), answered the same way.

use crate::output::Printer;
use kaizen_protocol::{Approval, ApprovalFuture, ApprovalRequest, Approver, PermissionMode};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// What the program asked for with a control request.
#[derive(Debug, PartialEq)]
pub enum Request {
    /// The SDK's opening handshake.
    Initialize,
    /// Interrupt the current run.
    Interrupt,
    /// Compact the conversation before the next model call.
    Compact,
    /// Judge calls under this mode from the next model call on.
    SetMode(PermissionMode),
}

/// A control request as read: its id (`None` when it had none, and so
/// gets no answer) and what it asks, or why it cannot be done.
#[derive(Debug, PartialEq)]
pub struct Control {
    /// The `request_id` to answer.
    pub id: Option<String>,
    /// The request, or the error to answer it with.
    pub request: Result<Request, String>,
}

/// Reads a `control_request`'s `request`.
pub fn read_request(id: Option<String>, request: &Value) -> Control {
    let request = match request["subtype"].as_str() {
        Some("initialize") => initialize(request),
        Some("interrupt") => Ok(Request::Interrupt),
        Some("compact") => Ok(Request::Compact),
        Some("set_permission_mode") => match request["mode"].as_str() {
            Some(mode) => PermissionMode::parse(mode).map(Request::SetMode),
            None => Err("set_permission_mode needs a `mode`".into()),
        },
        other => Err(format!(
            "Kaizen does not answer the control request `{}`; it answers initialize, interrupt, \
             set_permission_mode and compact",
            other.unwrap_or("(no subtype)")
        )),
    };
    Control { id, request }
}

/// The handshake, refused when it asks for what Kaizen would otherwise
/// drop without a word: hook callbacks and agents defined in the program.
fn initialize(request: &Value) -> Result<Request, String> {
    let given = |key: &str| match &request[key] {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        Value::Array(list) => !list.is_empty(),
        _ => true,
    };
    if given("hooks") {
        return Err(
            "Kaizen does not run hook callbacks defined in the program (the SDK's \
                    `hooks` option); use command hooks in .claude/settings.json or Kaizen's \
                    hook plugins"
                .into(),
        );
    }
    if given("agents") {
        return Err(
            "Kaizen does not take agents defined in the program (the SDK's `agents` option); \
             put them in .claude/agents/*.md"
                .into(),
        );
    }
    Ok(Request::Initialize)
}

/// What `initialize` is answered with: what Kaizen is, as Claude Code
/// describes itself (the session's commands come in the `init` message).
pub fn initialize_answer() -> Value {
    json!({
        "commands": [],
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [],
        "account": {},
        "pid": std::process::id(),
        "runtime": kaizen_protocol::RUNTIME_NAME,
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// Writes the answer to request `id`: `success` with `response`, or
/// `error` with the message.
pub fn respond(printer: &Printer, id: &str, answer: Result<Value, String>) {
    let response = match answer {
        Ok(response) => json!({"subtype": "success", "request_id": id, "response": response}),
        Err(error) => json!({"subtype": "error", "request_id": id, "error": error}),
    };
    printer.line(&json!({"type": "control_response", "response": response}));
}

/// The program's answer to one of Kaizen's questions.
#[derive(Debug, PartialEq)]
pub struct Answer {
    /// The question's `request_id`.
    pub id: String,
    /// Allowed (once or always) or refused.
    pub approval: Approval,
    /// The input to run instead (`updatedInput`), when one was given.
    pub updated_input: Option<Value>,
    /// Whether the refusal also interrupts the run (`interrupt: true`).
    pub interrupt: bool,
}

/// Reads a `control_response`'s `response`.
pub fn read_answer(response: &Value) -> Result<Answer, String> {
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
    Ok(Answer {
        id: id.to_string(),
        updated_input: match &approval {
            Approval::Once | Approval::Always => answer.get("updatedInput").cloned(),
            _ => None,
        },
        interrupt: answer["interrupt"] == true,
        approval,
    })
}

/// A question waiting for its answer: who waits, and the input asked
/// about.
type Open = (oneshot::Sender<Approval>, Value);

/// The questions asked and not yet answered, by request id.
#[derive(Clone, Default)]
pub struct Questions(Arc<Mutex<HashMap<String, Open>>>);

impl Questions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Settles the question `answer` answers; an answer to nothing asked
    /// is reported. An input the program changed is the one that runs.
    pub fn settle(&self, answer: Answer) {
        let Some((waiting, asked)) = self.lock().remove(&answer.id) else {
            eprintln!(
                "kaizen: an answer to `{}` came, which nothing asked; skipped",
                answer.id
            );
            return;
        };
        let approval = match answer.updated_input {
            Some(input) if input != asked => Approval::Edited(input),
            _ => answer.approval,
        };
        let _ = waiting.send(approval);
    }

    /// Refuses every question still open: nobody is left to answer.
    pub fn refuse_all(&self) {
        self.lock().clear();
    }
}

/// Asks the embedding program about tool calls, over stdout and stdin.
pub struct StreamApprover {
    printer: Arc<Printer>,
    questions: Questions,
    next: AtomicU64,
}

impl StreamApprover {
    /// An approver whose questions `questions` settles.
    pub fn new(printer: Arc<Printer>, questions: Questions) -> Self {
        Self {
            printer,
            questions,
            next: AtomicU64::new(0),
        }
    }
}

impl Approver for StreamApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let id = format!("kaizen-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
            let (answer, answered) = oneshot::channel();
            self.questions
                .lock()
                .insert(id.clone(), (answer, request.input.clone()));
            self.printer.line(&json!({
                "type": "control_request",
                "request_id": id,
                "request": can_use_tool(request),
            }));
            answered.await.unwrap_or_else(|_| {
                Approval::Deny("nobody answered: the input stream closed".into())
            })
        })
    }
}

/// The `can_use_tool` request, with Claude Code's fields (and Kaizen's
/// own beside them: the reason, the rule "always" adds, the sub-agent).
fn can_use_tool(request: &ApprovalRequest) -> Value {
    let (tool, content) = match request.always_rule.split_once('(') {
        Some((tool, rest)) => (tool, rest.strip_suffix(')').map(str::to_string)),
        None => (request.always_rule.as_str(), None),
    };
    json!({
        "subtype": "can_use_tool",
        "tool_name": request.tool,
        "input": request.input,
        "tool_use_id": request.call_id,
        "decision_reason": request.reason,
        "permission_suggestions": [{
            "type": "addRules",
            "rules": [{"toolName": tool, "ruleContent": content}],
            "behavior": "allow",
            "destination": "session",
        }],
        "agent_id": request.agent,
        "reason": request.reason,
        "always_rule": request.always_rule,
        "agent": request.agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_or_refused_with_a_reason() {
        let read = |request: Value| read_request(Some("r".into()), &request).request;
        assert_eq!(
            read(json!({"subtype": "interrupt"})),
            Ok(Request::Interrupt)
        );
        assert_eq!(
            read(json!({"subtype": "initialize", "hooks": null})),
            Ok(Request::Initialize)
        );
        assert_eq!(
            read(json!({"subtype": "set_permission_mode", "mode": "acceptEdits"})),
            Ok(Request::SetMode(PermissionMode::AcceptEdits))
        );
        for (request, said) in [
            (
                json!({"subtype": "set_permission_mode", "mode": "yolo"}),
                "unknown permission mode",
            ),
            (json!({"subtype": "set_model", "model": "x"}), "`set_model`"),
            (
                json!({"subtype": "initialize", "hooks": {"PreToolUse": [{"hookCallbackIds": ["hook_0"]}]}}),
                "hook callbacks",
            ),
            (
                json!({"subtype": "initialize", "agents": {"a": {}}}),
                "agents",
            ),
        ] {
            let err = read(request.clone()).unwrap_err();
            assert!(err.contains(said), "{request}: {err}");
        }
    }

    #[test]
    fn answers_as_the_sdk_writes_them() {
        let answer = |response: Value| read_answer(&response);
        let allowed = answer(json!({"subtype": "success", "request_id": "k1",
            "response": {"behavior": "allow", "updatedInput": {"command": "ls"}}}))
        .unwrap();
        assert_eq!(allowed.approval, Approval::Once);
        assert_eq!(allowed.updated_input, Some(json!({"command": "ls"})));
        let always = answer(json!({"subtype": "success", "request_id": "k2",
            "response": {"behavior": "allow", "updatedPermissions": [{"type": "addRules"}]}}))
        .unwrap();
        assert_eq!(always.approval, Approval::Always);
        let denied = answer(json!({"subtype": "success", "request_id": "k3",
            "response": {"behavior": "deny", "message": "Use git.", "interrupt": true}}))
        .unwrap();
        assert_eq!(denied.approval, Approval::Deny("Use git.".into()));
        assert!(denied.interrupt && denied.updated_input.is_none());
        let failed =
            answer(json!({"subtype": "error", "request_id": "k4", "error": "callback raised"}))
                .unwrap();
        assert_eq!(failed.approval, Approval::Deny("callback raised".into()));
        assert!(answer(json!({"subtype": "success", "response": {"behavior": "allow"}})).is_err());
        assert!(answer(json!({"subtype": "success", "request_id": "k5", "response": {}})).is_err());
    }

    #[test]
    fn an_unchanged_input_is_a_plain_approval_and_a_changed_one_an_edit() {
        let questions = Questions::default();
        let (sender, mut same) = oneshot::channel();
        questions
            .lock()
            .insert("a".into(), (sender, json!({"command": "ls"})));
        questions.settle(Answer {
            id: "a".into(),
            approval: Approval::Once,
            updated_input: Some(json!({"command": "ls"})),
            interrupt: false,
        });
        assert_eq!(same.try_recv().unwrap(), Approval::Once);
        let (sender, mut edited) = oneshot::channel();
        questions
            .lock()
            .insert("b".into(), (sender, json!({"command": "rm -rf x"})));
        questions.settle(Answer {
            id: "b".into(),
            approval: Approval::Always,
            updated_input: Some(json!({"command": "ls x"})),
            interrupt: false,
        });
        assert_eq!(
            edited.try_recv().unwrap(),
            Approval::Edited(json!({"command": "ls x"}))
        );
    }

    #[test]
    fn questions_carry_claude_codes_fields() {
        let request = ApprovalRequest {
            tool: "Bash".into(),
            input: json!({"command": "npm test"}),
            reason: "it asks".into(),
            always_rule: "Bash(npm test)".into(),
            agent: None,
            call_id: "call_1".into(),
        };
        let asked = can_use_tool(&request);
        assert_eq!(asked["tool_use_id"], "call_1");
        assert_eq!(
            asked["permission_suggestions"][0]["rules"][0],
            json!({"toolName": "Bash", "ruleContent": "npm test"})
        );
        let bare = ApprovalRequest {
            always_rule: "WebFetch".into(),
            ..request
        };
        assert_eq!(
            can_use_tool(&bare)["permission_suggestions"][0]["rules"][0],
            json!({"toolName": "WebFetch", "ruleContent": null})
        );
    }
}
