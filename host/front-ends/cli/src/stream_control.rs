//! The control protocol of stream-json input, as Claude Code's Agent SDKs
//! speak it: requests from the program (`initialize`, `interrupt`,
//! `set_permission_mode`, `compact`), each answered by a
//! `control_response` with its `request_id`; and Kaizen's own requests
//! to the program, answered the same way ([`Channel`]): `can_use_tool`
//! questions ([`crate::stream_approver`]), and `mcp_message`s to the
//! program's in-process MCP servers.

use crate::output::Printer;
use kaizen_mcp::client::{EmbedderLink, Exchange};
use kaizen_protocol::PermissionMode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// What the program asked for with a control request.
#[derive(Debug, PartialEq)]
pub enum Request {
    /// The SDK's opening handshake.
    Initialize(Box<Handshake>),
    /// Interrupt the current run.
    Interrupt,
    /// Compact the conversation before the next model call (its summary
    /// keeping what the instructions say).
    Compact(Option<String>),
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
        Some("compact") => Ok(Request::Compact(
            request["instructions"].as_str().map(str::to_string),
        )),
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

/// What the SDK's handshake asks of the session besides its flags (the
/// TypeScript SDK sends these here rather than on the command line).
#[derive(Debug, Default, PartialEq)]
pub struct Handshake {
    /// The program's in-process MCP servers, by name.
    pub sdk_mcp_servers: Vec<String>,
    /// Other MCP servers, as `--mcp-config` would name them.
    pub mcp_config: Option<String>,
    /// A system prompt instead of Kaizen's.
    pub system_prompt: Option<String>,
    /// Text added to the system prompt.
    pub append_system_prompt: Option<String>,
    /// The program's hook callbacks.
    pub hooks: Vec<crate::sdk_hooks::CallbackSpec>,
}

/// A prompt sent as a string or as a list of strings.
fn prompt_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n\n"),
        ),
        _ => None,
    }
}

/// The handshake, refused when it asks for what Kaizen would otherwise
/// drop without a word: agents defined in the program, structured
/// output, or a hook Kaizen cannot run.
fn initialize(request: &Value) -> Result<Request, String> {
    let given = |key: &str| match &request[key] {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        Value::Array(list) => !list.is_empty(),
        _ => true,
    };
    if given("agents") {
        return Err(
            "Kaizen does not take agents defined in the program (the SDK's `agents` option); \
             put them in .claude/agents/*.md"
                .into(),
        );
    }
    if given("jsonSchema") {
        return Err(
            "Kaizen does not produce structured output (the SDK's `outputFormat` option); ask \
             for JSON in the prompt instead"
                .into(),
        );
    }
    let handshake = Handshake {
        sdk_mcp_servers: request["sdkMcpServers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        mcp_config: given("mcpServers")
            .then(|| json!({"mcpServers": request["mcpServers"]}).to_string()),
        system_prompt: prompt_text(&request["systemPrompt"]),
        append_system_prompt: prompt_text(&request["appendSystemPrompt"]),
        hooks: crate::sdk_hooks::read_hooks(&request["hooks"])?,
    };
    Ok(Request::Initialize(Box::new(handshake)))
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

/// Kaizen's requests to the program that wait for their answers, by
/// request id; each answer is the `control_response`'s `response`.
#[derive(Clone, Default)]
pub struct Pending(Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>);

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands a `control_response`'s `response` to the request it
    /// answers; an answer to nothing asked is an error.
    pub fn deliver(&self, response: Value) -> Result<(), String> {
        let id = response["request_id"]
            .as_str()
            .ok_or("a control_response needs response.request_id")?
            .to_string();
        match self.lock().remove(&id) {
            Some(waiting) => {
                let _ = waiting.send(response);
                Ok(())
            }
            None => Err(format!("an answer to `{id}` came, which nothing asked")),
        }
    }

    /// Gives up every request still open: nobody is left to answer.
    pub fn abandon_all(&self) {
        self.lock().clear();
    }
}

/// Where Kaizen asks the program: control requests on stdout, their
/// answers (read from stdin) through [`Pending`].
#[derive(Clone)]
pub struct Channel {
    printer: Arc<Printer>,
    pending: Pending,
    next: Arc<AtomicU64>,
}

impl Channel {
    /// A channel writing to `printer`, answered through `pending`.
    pub fn new(printer: Arc<Printer>, pending: Pending) -> Self {
        Self {
            printer,
            pending,
            next: Arc::default(),
        }
    }

    /// Sends `request` and waits for its `control_response`'s `response`;
    /// an error once the program's input has closed.
    pub async fn request(&self, request: Value) -> Result<Value, String> {
        let id = format!("kaizen-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (answer, answered) = oneshot::channel();
        self.pending.lock().insert(id.clone(), answer);
        self.printer.line(&json!({
            "type": "control_request",
            "request_id": id,
            "request": request,
        }));
        answered
            .await
            .map_err(|_| "nobody answered: the input stream closed".to_string())
    }
}

/// The program's in-process MCP servers (`"type": "sdk"` in
/// `--mcp-config`), reached with `mcp_message` requests.
impl EmbedderLink for Channel {
    fn exchange(&self, server: &str, message: Value) -> Exchange<'_> {
        let request = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        let server = server.to_string();
        Box::pin(async move {
            let response = self.request(request).await?;
            if response["subtype"] == "error" {
                return Err(format!(
                    "the program could not reach its MCP server `{server}`: {}",
                    response["error"].as_str().unwrap_or("no reason given")
                ));
            }
            Ok(response["response"].get("mcp_response").cloned())
        })
    }
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
            Ok(Request::Initialize(Box::default()))
        );
        let handshake = read(
            json!({"subtype": "initialize", "sdkMcpServers": ["counter"],
            "systemPrompt": ["Be brief.", "Use tabs."], "appendSystemPrompt": "Sign off.",
            "mcpServers": {"files": {"command": "files-server"}}}),
        );
        assert_eq!(
            handshake,
            Ok(Request::Initialize(Box::new(Handshake {
                sdk_mcp_servers: vec!["counter".into()],
                mcp_config: Some(
                    json!({"mcpServers": {"files": {"command": "files-server"}}}).to_string()
                ),
                system_prompt: Some("Be brief.\n\nUse tabs.".into()),
                append_system_prompt: Some("Sign off.".into()),
                hooks: Vec::new(),
            })))
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
                json!({"subtype": "initialize", "hooks": {"OnLunch": [{"hookCallbackIds": ["hook_0"]}]}}),
                "OnLunch",
            ),
            (
                json!({"subtype": "initialize", "agents": {"a": {}}}),
                "agents",
            ),
            (
                json!({"subtype": "initialize", "jsonSchema": {"type": "object"}}),
                "structured output",
            ),
        ] {
            let err = read(request.clone()).unwrap_err();
            assert!(err.contains(said), "{request}: {err}");
        }
    }

    #[test]
    fn answers_go_to_what_asked_them_and_nothing_else() {
        let pending = Pending::default();
        let (sender, mut waiting) = oneshot::channel();
        pending.lock().insert("kaizen-1".into(), sender);
        assert!(pending.deliver(json!({"request_id": "kaizen-2"})).is_err());
        assert!(pending.deliver(json!({"subtype": "success"})).is_err());
        pending
            .deliver(json!({"subtype": "success", "request_id": "kaizen-1", "response": {}}))
            .unwrap();
        assert_eq!(waiting.try_recv().unwrap()["request_id"], "kaizen-1");
        assert!(pending.deliver(json!({"request_id": "kaizen-1"})).is_err());
    }
}
