//! OpenAI Chat Completions, which also serves every OpenAI-compatible server
//! (vLLM, llama.cpp, LM Studio, OpenRouter, ...) through the base URL.

mod stream;

use crate::http::{ApiKey, Call, HttpSettings, Transport};
use crate::types::{
    Block, CompletionFuture, EventSink, LlmError, LlmErrorKind, Provider, Request, Role,
};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};

/// `OPENAI_BASE_URL`'s default. It includes `/v1`, as in OpenAI's SDKs.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How to reach an OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// Sent as `Authorization: Bearer`; optional because local
    /// OpenAI-compatible servers usually take none.
    pub api_key: Option<ApiKey>,
    /// The API root including `/v1`.
    pub base_url: String,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl OpenAiConfig {
    /// A config for `base_url` (`None`: api.openai.com) with default HTTP
    /// settings.
    pub fn new(api_key: Option<ApiKey>, base_url: Option<String>) -> Self {
        OpenAiConfig {
            api_key,
            base_url: base_url.unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_string()),
            http: HttpSettings::default(),
        }
    }
}

/// The OpenAI Chat Completions provider.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    url: String,
    headers: HeaderMap,
    transport: Transport,
}

impl OpenAiProvider {
    /// Builds the provider; fails only when the key is not a valid header
    /// value or the HTTP client cannot be set up.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &config.api_key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    LlmError {
                        kind: LlmErrorKind::Auth,
                        message:
                            "OPENAI_API_KEY contains characters that cannot be sent in a header"
                                .into(),
                    }
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(OpenAiProvider {
            url: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
            headers,
            transport: Transport::new(config.http)?,
        })
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let call = Call {
                provider: "OpenAI",
                url: self.url.clone(),
                headers: self.headers.clone(),
                body: request_body(request).to_string().into_bytes(),
                key_var: "OPENAI_API_KEY",
                base_var: "OPENAI_BASE_URL",
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

/// Reasoning models refuse `max_tokens` and want `max_completion_tokens`;
/// many compatible servers know only `max_tokens`, so the name decides.
fn uses_max_completion_tokens(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

/// The Chat Completions body for `request`.
pub(crate) fn request_body(request: &Request) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message.role {
            Role::Assistant => messages.push(assistant_message(&message.content)),
            Role::User => user_messages(&message.content, &mut messages),
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let limit_field = if uses_max_completion_tokens(&request.model) {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit_field] = json!(request.max_tokens);
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
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

fn assistant_message(blocks: &[Block]) -> Value {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text: part } => text.push_str(part),
            Block::ToolUse {
                id,
                name,
                arguments,
            } => calls.push(json!({
                "id": id,
                "type": "function",
                // Sent back verbatim, malformed or not: the model already saw
                // what was wrong with it in the tool result. Only an empty
                // string, which no server accepts as JSON, becomes `{}`.
                "function": {
                    "name": name,
                    "arguments": if arguments.is_empty() { "{}" } else { arguments.as_str() },
                },
            })),
            // Assistants produce no images or tool results.
            Block::Image { .. } | Block::ToolResult { .. } => {}
        }
    }
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() { Value::Null } else { Value::String(text) },
    });
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    message
}

/// A user turn becomes `tool` messages first (they must directly follow the
/// assistant's `tool_calls`), then one user message with the rest: its text
/// and images, and the images tool results returned, which `tool` messages
/// cannot carry.
fn user_messages(blocks: &[Block], out: &mut Vec<Value>) {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text } => parts.push(json!({"type": "text", "text": text})),
            Block::Image {
                media_type,
                data_base64,
            } => parts.push(image_part(media_type, data_base64)),
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                let mut text = String::new();
                let mut images = 0;
                for part in content {
                    match part {
                        Block::Text { text: piece } => {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(piece);
                        }
                        Block::Image {
                            media_type,
                            data_base64,
                        } => {
                            images += 1;
                            parts.push(image_part(media_type, data_base64));
                        }
                        Block::ToolUse { .. } | Block::ToolResult { .. } => {}
                    }
                }
                if images > 0 {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&format!(
                        "[{images} image(s) from this tool result follow in the next user message]"
                    ));
                }
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": text}));
            }
            Block::ToolUse { .. } => {}
        }
    }
    if parts.is_empty() {
        return;
    }
    // A plain string where possible: some compatible servers reject arrays.
    let only_text: Option<Vec<&str>> = parts.iter().map(|p| p["text"].as_str()).collect();
    let content = match only_text {
        Some(texts) => Value::String(texts.join("\n")),
        None => Value::Array(parts),
    };
    out.push(json!({"role": "user", "content": content}));
}

fn image_part(media_type: &str, data_base64: &str) -> Value {
    json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{media_type};base64,{data_base64}")},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, ToolDefinition};

    fn request(messages: Vec<Message>) -> Request {
        Request {
            model: "gpt-4o".into(),
            system: "be brief".into(),
            messages,
            tools: vec![ToolDefinition {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 100,
            temperature: Some(0.5),
        }
    }

    #[test]
    fn body_maps_the_conversation() {
        let body = request_body(&request(vec![
            Message {
                role: Role::User,
                content: vec![Block::Text { text: "hi".into() }],
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    Block::Text {
                        text: "reading".into(),
                    },
                    Block::ToolUse {
                        id: "call_1".into(),
                        name: "Read".into(),
                        arguments: "{\"path\":".into(),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: vec![
                        Block::Text {
                            text: "bad json".into(),
                        },
                        Block::Image {
                            media_type: "image/png".into(),
                            data_base64: "AAA=".into(),
                        },
                    ],
                    is_error: true,
                }],
            },
        ]));
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 100);
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(body["tools"][0]["function"]["name"], "Read");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(
            messages[0],
            json!({"role": "system", "content": "be brief"})
        );
        assert_eq!(messages[1], json!({"role": "user", "content": "hi"}));
        assert_eq!(messages[2]["content"], "reading");
        assert_eq!(
            messages[2]["tool_calls"][0]["function"]["arguments"],
            "{\"path\":"
        );
        assert_eq!(messages[3]["role"], "tool");
        assert_eq!(messages[3]["tool_call_id"], "call_1");
        assert!(
            messages[3]["content"]
                .as_str()
                .expect("text")
                .starts_with("bad json\n[1 image(s)")
        );
        assert_eq!(messages[4]["role"], "user");
        assert_eq!(
            messages[4]["content"][0]["image_url"]["url"],
            "data:image/png;base64,AAA="
        );
        assert_eq!(messages.len(), 5);
    }

    #[test]
    fn reasoning_models_get_max_completion_tokens() {
        let mut req = request(vec![]);
        req.model = "o4-mini".into();
        let body = request_body(&req);
        assert_eq!(body["max_completion_tokens"], 100);
        assert!(body.get("max_tokens").is_none());
        assert!(uses_max_completion_tokens("openai/gpt-5-mini"));
        assert!(!uses_max_completion_tokens("gpt-4.1"));
    }

    #[test]
    fn url_joins_base() {
        let provider = OpenAiProvider::new(OpenAiConfig::new(
            Some(ApiKey::new("k")),
            Some("http://127.0.0.1:1/v1/".into()),
        ))
        .expect("provider");
        assert_eq!(provider.url, "http://127.0.0.1:1/v1/chat/completions");
        assert!(!format!("{provider:?}").contains("Bearer k"));
    }
}
