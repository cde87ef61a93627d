//! Anthropic Messages, with prompt caching.

mod stream;

use crate::http::{ApiKey, Call, HttpSettings, Transport};
use crate::types::{
    Block, CompletionFuture, EventSink, LlmError, LlmErrorKind, Provider, Request, Role,
};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};

/// `ANTHROPIC_BASE_URL`'s default. It does not include `/v1`, as in
/// Anthropic's SDKs.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this wire format follows.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How to reach Anthropic.
#[derive(Debug, Clone, PartialEq)]
pub struct AnthropicConfig {
    /// Sent as `x-api-key`; optional only for a proxy or compatible server
    /// that takes none.
    pub api_key: Option<ApiKey>,
    /// The API root without `/v1`.
    pub base_url: String,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl AnthropicConfig {
    /// A config for `base_url` (`None`: api.anthropic.com) with default HTTP
    /// settings.
    pub fn new(api_key: Option<ApiKey>, base_url: Option<String>) -> Self {
        AnthropicConfig {
            api_key,
            base_url: base_url.unwrap_or_else(|| ANTHROPIC_DEFAULT_BASE_URL.to_string()),
            http: HttpSettings::default(),
        }
    }
}

/// The Anthropic Messages provider.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    url: String,
    headers: HeaderMap,
    transport: Transport,
}

impl AnthropicProvider {
    /// Builds the provider; fails only when the key is not a valid header
    /// value or the HTTP client cannot be set up.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = &config.api_key {
            let mut value = HeaderValue::from_str(key.expose()).map_err(|_| LlmError {
                kind: LlmErrorKind::Auth,
                message: "ANTHROPIC_API_KEY contains characters that cannot be sent in a header"
                    .into(),
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(AnthropicProvider {
            url: format!("{}/v1/messages", config.base_url.trim_end_matches('/')),
            headers,
            transport: Transport::new(config.http)?,
        })
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let call = Call {
                provider: "Anthropic",
                url: self.url.clone(),
                headers: self.headers.clone(),
                body: request_body(request).to_string().into_bytes(),
                key_var: "ANTHROPIC_API_KEY",
                base_var: "ANTHROPIC_BASE_URL",
            };
            let fallback_model = request.model.clone();
            self.transport
                .stream(
                    &call,
                    || stream::Decoder::new(fallback_model.clone()),
                    events,
                )
                .await
        })
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The Messages body for `request`. Three cache breakpoints: the system
/// prompt, the last tool definition (tools come first in the cached prefix)
/// and the last block of the conversation, so each turn of an agent loop
/// reads the previous turn's prefix from the cache.
pub(crate) fn request_body(request: &Request) -> Value {
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|message| {
            let content = content_blocks(message.role, &message.content);
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            (!content.is_empty()).then(|| json!({"role": role, "content": content}))
        })
        .collect();
    if let Some(last) = messages
        .last_mut()
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
    {
        last["cache_control"] = ephemeral();
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": request.system,
            "cache_control": ephemeral(),
        }]);
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = Value::Array(tools);
    }
    body
}

/// A message's blocks. The API refuses empty text blocks, and wants a user
/// message's `tool_result` blocks before anything else in it.
fn content_blocks(role: Role, blocks: &[Block]) -> Vec<Value> {
    let mut results = Vec::new();
    let mut others = Vec::new();
    for block in blocks {
        match block {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut result = json!({"type": "tool_result", "tool_use_id": tool_use_id});
                let inner: Vec<Value> = content.iter().filter_map(simple_block).collect();
                if !inner.is_empty() {
                    result["content"] = Value::Array(inner);
                }
                if *is_error {
                    result["is_error"] = json!(true);
                }
                results.push(result);
            }
            Block::ToolUse {
                id,
                name,
                arguments,
            } if role == Role::Assistant => {
                others.push(json!({
                    "type": "tool_use",
                    "id": id,
                    "name": name,
                    "input": tool_input(arguments),
                }));
            }
            other => others.extend(simple_block(other)),
        }
    }
    results.extend(others);
    results
}

/// Text and images; `None` for empty text and for blocks that cannot appear
/// where they are.
fn simple_block(block: &Block) -> Option<Value> {
    match block {
        Block::Text { text } if !text.is_empty() => Some(json!({"type": "text", "text": text})),
        Block::Image {
            media_type,
            data_base64,
        } => Some(json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data_base64},
        })),
        _ => None,
    }
}

/// `input` must be a JSON object. Malformed arguments become `{}`: the model
/// already learned what was wrong from the tool result.
fn tool_input(arguments: &str) -> Value {
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
    fn body_maps_the_conversation_with_cache_breakpoints() {
        let tool = |name: &str| ToolDefinition {
            name: name.into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        };
        let request = Request {
            model: "claude-sonnet-4-5".into(),
            system: "sys".into(),
            messages: vec![
                Message {
                    role: Role::User,
                    content: vec![
                        Block::Text { text: "hi".into() },
                        Block::Text {
                            text: String::new(),
                        },
                    ],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![
                        Block::ToolUse {
                            id: "t1".into(),
                            name: "Read".into(),
                            arguments: "{\"path\":\"a\"}".into(),
                        },
                        Block::ToolUse {
                            id: "t2".into(),
                            name: "Read".into(),
                            arguments: "{\"path\":".into(),
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        Block::Text {
                            text: "also".into(),
                        },
                        Block::ToolResult {
                            tool_use_id: "t1".into(),
                            content: vec![Block::Text { text: "ok".into() }],
                            is_error: false,
                        },
                        Block::ToolResult {
                            tool_use_id: "t2".into(),
                            content: vec![Block::Text { text: "bad".into() }],
                            is_error: true,
                        },
                    ],
                },
            ],
            tools: vec![tool("Read"), tool("Glob")],
            max_tokens: 1024,
            temperature: None,
        };
        let body = request_body(&request);
        assert_eq!(body["stream"], true);
        assert_eq!(body["max_tokens"], 1024);
        assert!(body.get("temperature").is_none());
        assert_eq!(body["system"][0]["text"], "sys");
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(body["tools"][1]["cache_control"]["type"], "ephemeral");
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(messages[0]["content"].as_array().map(Vec::len), Some(1));
        assert_eq!(messages[1]["content"][0]["input"], json!({"path": "a"}));
        assert_eq!(messages[1]["content"][1]["input"], json!({}));
        let last = messages[2]["content"].as_array().expect("content");
        assert_eq!(last[0]["type"], "tool_result");
        assert_eq!(last[0]["content"][0]["text"], "ok");
        assert!(last[0].get("is_error").is_none());
        assert_eq!(last[1]["is_error"], true);
        assert_eq!(last[2]["text"], "also");
        assert_eq!(last[2]["cache_control"]["type"], "ephemeral");
    }

    #[test]
    fn url_and_redacted_debug() {
        let provider = AnthropicProvider::new(AnthropicConfig::new(
            Some(ApiKey::new("sk-ant-secret")),
            Some("http://127.0.0.1:9/".into()),
        ))
        .expect("provider");
        assert_eq!(provider.url, "http://127.0.0.1:9/v1/messages");
        assert!(!format!("{provider:?}").contains("secret"));
    }
}
