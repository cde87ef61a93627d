//! Ollama's native `/api/chat`, streamed as NDJSON.

mod stream;

use crate::http::{Call, HttpSettings, Transport};
use crate::types::{Block, CompletionFuture, EventSink, LlmError, Provider, Request, Role};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// `OLLAMA_HOST`'s default: the server root.
pub const OLLAMA_DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// How to reach an Ollama server.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaConfig {
    /// The server root, e.g. `http://127.0.0.1:11434`.
    pub host: String,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl OllamaConfig {
    /// A config for an `OLLAMA_HOST` value (`None`: the local default),
    /// read as Ollama reads it: see [`ollama_host_url`].
    pub fn new(host: Option<&str>) -> Self {
        OllamaConfig {
            host: host.map_or_else(|| OLLAMA_DEFAULT_HOST.to_string(), ollama_host_url),
            http: HttpSettings::default(),
        }
    }
}

/// Normalizes an `OLLAMA_HOST` value the way Ollama's own client does: the
/// scheme defaults to `http`, the port to 11434 without a scheme (80/443
/// with an explicit `http://`/`https://`), the host to 127.0.0.1; so
/// `localhost:11434`, `0.0.0.0` and `:8080` all work.
pub fn ollama_host_url(value: &str) -> String {
    let value = value.trim().trim_end_matches('/');
    if value.is_empty() {
        return OLLAMA_DEFAULT_HOST.to_string();
    }
    let (scheme, rest, default_port) = match value.split_once("://") {
        Some((scheme, rest)) => {
            let port = if scheme.eq_ignore_ascii_case("https") {
                "443"
            } else {
                "80"
            };
            (scheme, rest, port)
        }
        None => ("http", value, "11434"),
    };
    let (authority, path) = match rest.split_once('/') {
        Some((authority, path)) => (authority, format!("/{path}")),
        None => (rest, String::new()),
    };
    // A port follows the last colon, unless that colon is inside an IPv6
    // literal's brackets.
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') && port.parse::<u16>().is_ok() => (host, port),
        _ => (authority, default_port),
    };
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    format!("{scheme}://{host}:{port}{path}")
}

/// The Ollama provider.
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    url: String,
    transport: Transport,
    /// Ollama's tool calls have no ids; `call_<n>` from this counter keeps
    /// them unique for the provider's lifetime.
    next_call: Arc<AtomicU64>,
}

impl OllamaProvider {
    /// Builds the provider; fails only when the HTTP client cannot be set up.
    pub fn new(config: OllamaConfig) -> Result<Self, LlmError> {
        Ok(OllamaProvider {
            url: format!("{}/api/chat", config.host.trim_end_matches('/')),
            transport: Transport::new(config.http)?,
            next_call: Arc::new(AtomicU64::new(0)),
        })
    }
}

impl Provider for OllamaProvider {
    fn name(&self) -> &str {
        "ollama"
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            let call = Call {
                provider: "Ollama",
                url: self.url.clone(),
                headers,
                body: request_body(request).to_string().into_bytes(),
                // Ollama has no key; a 401 comes from a proxy in front of it.
                key_var: "OLLAMA_HOST (and the proxy in front of it)",
                base_var: "OLLAMA_HOST",
            };
            let fallback_model = request.model.clone();
            self.transport
                .stream(
                    &call,
                    || stream::Decoder::new(fallback_model.clone(), self.next_call.clone()),
                    events,
                )
                .await
        })
    }
}

/// The `/api/chat` body for `request`.
pub(crate) fn request_body(request: &Request) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    // Tool results name their tool, which Ollama wants and the results only
    // know by call id.
    let mut tool_names: HashMap<&str, &str> = HashMap::new();
    for message in &request.messages {
        match message.role {
            Role::Assistant => {
                let mut text = String::new();
                let mut calls = Vec::new();
                for block in &message.content {
                    match block {
                        Block::Text { text: piece } => text.push_str(piece),
                        Block::ToolUse {
                            id,
                            name,
                            arguments,
                        } => {
                            tool_names.insert(id, name);
                            calls.push(json!({"function": {"name": name, "arguments": tool_arguments(arguments)}}));
                        }
                        Block::Image { .. } | Block::ToolResult { .. } => {}
                    }
                }
                let mut out = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    out["tool_calls"] = Value::Array(calls);
                }
                messages.push(out);
            }
            Role::User => user_messages(&message.content, &tool_names, &mut messages),
        }
    }
    let mut options = json!({"num_predict": request.max_tokens});
    if let Some(temperature) = request.temperature {
        options["temperature"] = json!(temperature);
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "options": options,
    });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    }
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// Tool results first, as `tool` messages; then a user message with the
/// text and the images (tool results' images too, which `tool` messages
/// cannot carry).
fn user_messages(blocks: &[Block], tool_names: &HashMap<&str, &str>, out: &mut Vec<Value>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text } => texts.push(text.as_str()),
            Block::Image { data_base64, .. } => images.push(data_base64.as_str()),
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                let mut text = Vec::new();
                for part in content {
                    match part {
                        Block::Text { text: piece } => text.push(piece.as_str()),
                        Block::Image { data_base64, .. } => images.push(data_base64.as_str()),
                        Block::ToolUse { .. } | Block::ToolResult { .. } => {}
                    }
                }
                let mut message = json!({"role": "tool", "content": text.join("\n")});
                if let Some(name) = tool_names.get(tool_use_id.as_str()) {
                    message["tool_name"] = json!(name);
                }
                out.push(message);
            }
            Block::ToolUse { .. } => {}
        }
    }
    if texts.is_empty() && images.is_empty() {
        return;
    }
    let mut message = json!({"role": "user", "content": texts.join("\n")});
    if !images.is_empty() {
        message["images"] = json!(images);
    }
    out.push(message);
}

/// Ollama wants the arguments as an object; malformed ones become `{}`
/// (the model already saw the error in the tool result).
fn tool_arguments(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, ToolDefinition};

    #[test]
    fn host_values_as_ollama_reads_them() {
        assert_eq!(ollama_host_url("localhost:11434"), "http://localhost:11434");
        assert_eq!(ollama_host_url("0.0.0.0"), "http://0.0.0.0:11434");
        assert_eq!(ollama_host_url(":8080"), "http://127.0.0.1:8080");
        assert_eq!(
            ollama_host_url("http://example.com/"),
            "http://example.com:80"
        );
        assert_eq!(
            ollama_host_url("https://example.com"),
            "https://example.com:443"
        );
        assert_eq!(
            ollama_host_url("http://127.0.0.1:5000/ollama"),
            "http://127.0.0.1:5000/ollama"
        );
        assert_eq!(ollama_host_url("[::1]:1234"), "http://[::1]:1234");
        assert_eq!(ollama_host_url("[::1]"), "http://[::1]:11434");
        assert_eq!(ollama_host_url(""), OLLAMA_DEFAULT_HOST);
    }

    #[test]
    fn body_maps_the_conversation() {
        let request = Request {
            model: "llama3.2".into(),
            system: "sys".into(),
            messages: vec![
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolUse {
                        id: "call_0".into(),
                        name: "Read".into(),
                        arguments: "{\"path\":\"a\"}".into(),
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        tool_use_id: "call_0".into(),
                        content: vec![
                            Block::Text { text: "one".into() },
                            Block::Image {
                                media_type: "image/png".into(),
                                data_base64: "AAA=".into(),
                            },
                        ],
                        is_error: false,
                    }],
                },
            ],
            tools: vec![ToolDefinition {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 64,
            temperature: Some(0.0),
        };
        let body = request_body(&request);
        assert_eq!(body["stream"], true);
        assert_eq!(body["options"]["num_predict"], 64);
        assert_eq!(body["tools"][0]["function"]["name"], "Read");
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(
            messages[1]["tool_calls"][0]["function"]["arguments"],
            json!({"path": "a"})
        );
        assert_eq!(
            messages[2],
            json!({"role": "tool", "content": "one", "tool_name": "Read"})
        );
        assert_eq!(
            messages[3],
            json!({"role": "user", "content": "", "images": ["AAA="]})
        );
    }
}
