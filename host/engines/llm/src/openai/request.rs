//! The Chat Completions request body, serialized straight from the borrowed
//! [`Request`]: no `Value` tree, no copy of the conversation.

use crate::types::{Block, Message, Request, Role};
use crate::wire::{FunctionTools, Joined, Texts, joined_texts, texts};
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use std::fmt;

/// Reasoning models refuse `max_tokens` and want `max_completion_tokens`;
/// many compatible servers know only `max_tokens`, so the name decides.
pub(super) fn uses_max_completion_tokens(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

/// The Chat Completions body for `request`, borrowing from it.
pub(crate) fn request_body(request: &Request) -> Body<'_> {
    request_body_n(request, None)
}

/// [`request_body`] asking for `n` choices.
pub(crate) fn request_body_n(request: &Request, n: Option<u32>) -> Body<'_> {
    let (max_tokens, max_completion_tokens) = if uses_max_completion_tokens(&request.model) {
        (None, Some(request.max_tokens))
    } else {
        (Some(request.max_tokens), None)
    };
    Body {
        model: &request.model,
        messages: Messages {
            system: &request.system,
            messages: &request.messages,
        },
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        max_tokens,
        max_completion_tokens,
        // Widened as `json!` did: the wire value stays the f32's exact value.
        temperature: request.temperature.map(f64::from),
        tools: FunctionTools(&request.tools),
        n,
    }
}

/// A Chat Completions request body.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "FunctionTools::is_empty")]
    tools: FunctionTools<'a>,
    /// Choices to generate (candidates); absent means one.
    #[serde(skip_serializing_if = "Option::is_none")]
    n: Option<u32>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The system prompt, then the conversation: an assistant turn is one
/// message; a user turn becomes `tool` messages first (they must directly
/// follow the assistant's `tool_calls`), then one user message with the
/// rest: its text and images, and the images tool results returned, which
/// `tool` messages cannot carry.
struct Messages<'a> {
    system: &'a str,
    messages: &'a [Message],
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        if !self.system.is_empty() {
            seq.serialize_element(&Out::System {
                content: self.system,
            })?;
        }
        for message in self.messages {
            let blocks = message.content.as_slice();
            match message.role {
                Role::Assistant => {
                    let has_text = texts(blocks).any(|text| !text.is_empty());
                    seq.serialize_element(&Out::Assistant {
                        content: has_text.then(|| joined_texts(blocks, "")),
                        tool_calls: ToolCalls(blocks),
                    })?;
                }
                Role::User => {
                    for block in blocks {
                        if let Block::ToolResult {
                            tool_use_id,
                            content,
                            ..
                        } = block
                        {
                            seq.serialize_element(&Out::Tool {
                                tool_call_id: tool_use_id,
                                content: ToolText(content),
                            })?;
                        }
                    }
                    let user = UserContent(blocks);
                    if user.has_parts() {
                        seq.serialize_element(&Out::User { content: user })?;
                    }
                }
            }
        }
        seq.end()
    }
}

/// One message on the wire.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Out<'a> {
    System {
        content: &'a str,
    },
    Assistant {
        /// The texts concatenated; `null` when there are none.
        content: Option<Joined<Texts<'a>>>,
        #[serde(skip_serializing_if = "ToolCalls::is_empty")]
        tool_calls: ToolCalls<'a>,
    },
    Tool {
        tool_call_id: &'a str,
        content: ToolText<'a>,
    },
    User {
        content: UserContent<'a>,
    },
}

/// An assistant turn's `ToolUse` blocks.
struct ToolCalls<'a>(&'a [Block]);

impl ToolCalls<'_> {
    fn is_empty(&self) -> bool {
        !self
            .0
            .iter()
            .any(|block| matches!(block, Block::ToolUse { .. }))
    }
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CalledFunction<'a>,
}

#[derive(Serialize)]
struct CalledFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

impl Serialize for ToolCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().filter_map(|block| match block {
            Block::ToolUse {
                id,
                name,
                arguments,
            } => Some(ToolCall {
                id,
                kind: "function",
                function: CalledFunction {
                    name,
                    // Sent back verbatim, malformed or not: the model already
                    // saw what was wrong with it in the tool result. Only an
                    // empty string, which no server accepts as JSON, becomes
                    // `{}`.
                    arguments: if arguments.is_empty() {
                        "{}"
                    } else {
                        arguments
                    },
                },
            }),
            _ => None,
        }))
    }
}

/// A tool result's `tool` message text: its texts, a newline between two
/// once any text was non-empty, then a note on the images, which follow in
/// the user message.
struct ToolText<'a>(&'a [Block]);

impl fmt::Display for ToolText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any_text = false;
        for text in texts(self.0) {
            if any_text {
                f.write_str("\n")?;
            }
            f.write_str(text)?;
            any_text |= !text.is_empty();
        }
        let images = self
            .0
            .iter()
            .filter(|block| matches!(block, Block::Image { .. }))
            .count();
        if images > 0 {
            if any_text {
                f.write_str("\n")?;
            }
            write!(
                f,
                "[{images} image(s) from this tool result follow in the next user message]"
            )?;
        }
        Ok(())
    }
}

impl Serialize for ToolText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A user turn's text and images, and its tool results' images: a plain
/// string when it is all text (some compatible servers reject arrays), else
/// an array of parts.
struct UserContent<'a>(&'a [Block]);

impl UserContent<'_> {
    fn images(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .flat_map(|block| match block {
                Block::ToolResult { content, .. } => content.as_slice(),
                other => std::slice::from_ref(other),
            })
            .filter_map(|block| match block {
                Block::Image {
                    media_type,
                    data_base64,
                } => Some((media_type.as_str(), data_base64.as_str())),
                _ => None,
            })
    }

    fn has_parts(&self) -> bool {
        texts(self.0).next().is_some() || self.images().next().is_some()
    }
}

impl Serialize for UserContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.images().next().is_none() {
            return joined_texts(self.0, "\n").serialize(serializer);
        }
        let mut seq = serializer.serialize_seq(None)?;
        for block in self.0 {
            match block {
                Block::Text { text } => seq.serialize_element(&Part::Text { text })?,
                Block::Image {
                    media_type,
                    data_base64,
                } => seq.serialize_element(&Part::image(media_type, data_base64))?,
                Block::ToolResult { content, .. } => {
                    for part in content {
                        if let Block::Image {
                            media_type,
                            data_base64,
                        } = part
                        {
                            seq.serialize_element(&Part::image(media_type, data_base64))?;
                        }
                    }
                }
                Block::ToolUse { .. } => {}
            }
        }
        seq.end()
    }
}

/// One part of an array `content`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl<'a> },
}

impl<'a> Part<'a> {
    fn image(media_type: &'a str, data_base64: &'a str) -> Self {
        Part::ImageUrl {
            image_url: ImageUrl {
                url: DataUrl {
                    media_type,
                    data_base64,
                },
            },
        }
    }
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: DataUrl<'a>,
}

/// `data:<media type>;base64,<data>`, written without building the string.
struct DataUrl<'a> {
    media_type: &'a str,
    data_base64: &'a str,
}

impl fmt::Display for DataUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data:{};base64,{}", self.media_type, self.data_base64)
    }
}

impl Serialize for DataUrl<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::parsed;
    use crate::types::{Message, ToolDefinition};
    use serde_json::{Value, json};

    fn wire_body(request: &Request) -> Value {
        parsed(&request_body(request))
    }
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
        let body = wire_body(&request(vec![
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
        let body = wire_body(&req);
        assert_eq!(body["max_completion_tokens"], 100);
        assert!(body.get("max_tokens").is_none());
        assert!(uses_max_completion_tokens("openai/gpt-5-mini"));
        assert!(!uses_max_completion_tokens("gpt-4.1"));
    }

    #[test]
    fn tool_text_images_and_null_content() {
        let body = wire_body(&Request {
            system: String::new(),
            tools: vec![],
            temperature: None,
            ..request(vec![
                Message {
                    role: Role::Assistant,
                    content: vec![
                        Block::Text {
                            text: String::new(),
                        },
                        Block::ToolUse {
                            id: "c".into(),
                            name: "Read".into(),
                            arguments: String::new(),
                        },
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        Block::ToolResult {
                            tool_use_id: "c".into(),
                            content: ["", "a", "", "b"]
                                .map(|text| Block::Text { text: text.into() })
                                .into(),
                            is_error: false,
                        },
                        Block::Text { text: "one".into() },
                        Block::Text { text: "two".into() },
                    ],
                },
            ])
        });
        assert!(body.get("temperature").is_none());
        assert!(body.get("tools").is_none());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "assistant", "content": null, "tool_calls": [{
                    "id": "c", "type": "function",
                    "function": {"name": "Read", "arguments": "{}"},
                }]},
                {"role": "tool", "tool_call_id": "c", "content": "a\n\nb"},
                {"role": "user", "content": "one\ntwo"},
            ])
        );
    }
}
