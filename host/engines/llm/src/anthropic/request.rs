//! The Messages request body, serialized straight from the borrowed
//! [`Request`]: no `Value` tree, no copy of the conversation.

use crate::types::{Block, Message, Request, Role, ToolDefinition};
use crate::wire::ObjectArguments;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use serde_json::Value;

/// The Messages body for `request`, borrowing from it. Three cache
/// breakpoints: the system prompt, the last tool definition (tools come
/// first in the cached prefix) and the last block of the conversation, so
/// each turn of an agent loop reads the previous turn's prefix from the
/// cache.
pub(crate) fn request_body(request: &Request) -> Body<'_> {
    Body {
        model: &request.model,
        max_tokens: request.max_tokens,
        messages: Messages(&request.messages),
        stream: true,
        system: (!request.system.is_empty()).then_some([SystemText {
            kind: "text",
            text: &request.system,
            cache_control: CacheControl::Ephemeral,
        }]),
        // Widened as `json!` did: the wire value stays the f32's exact value.
        temperature: request.temperature.map(f64::from),
        tools: Tools(&request.tools),
    }
}

/// A Messages request body.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Messages<'a>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[SystemText<'a>; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Tools::is_empty")]
    tools: Tools<'a>,
}

/// `{"type": "ephemeral"}`: a prompt-cache breakpoint.
#[derive(Clone, Copy, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum CacheControl {
    Ephemeral,
}

#[derive(Serialize)]
struct SystemText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

/// The tool definitions, the last one a cache breakpoint.
struct Tools<'a>(&'a [ToolDefinition]);

impl Tools<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let last = self.0.len().saturating_sub(1);
        serializer.collect_seq(self.0.iter().enumerate().map(|(i, tool)| Tool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            cache_control: (i == last).then_some(CacheControl::Ephemeral),
        }))
    }
}

/// The messages that have content; the last block of the last one is a
/// cache breakpoint.
struct Messages<'a>(&'a [Message]);

#[derive(Serialize)]
struct OutMessage<C> {
    role: Role,
    content: C,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let last = self
            .0
            .iter()
            .rposition(|message| content_blocks(message).next().is_some());
        let mut seq = serializer.serialize_seq(None)?;
        for (i, message) in self.0.iter().enumerate() {
            let blocks = content_blocks(message);
            if blocks.clone().next().is_none() {
                continue;
            }
            seq.serialize_element(&OutMessage {
                role: message.role,
                content: Content {
                    blocks,
                    cache_last: last == Some(i),
                },
            })?;
        }
        seq.end()
    }
}

/// A message's blocks. The API refuses empty text blocks, and wants a user
/// message's `tool_result` blocks before anything else in it.
fn content_blocks(message: &Message) -> impl Iterator<Item = OutBlock<'_>> + Clone {
    let role = message.role;
    let results = message.content.iter().filter_map(|block| match block {
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => Some(OutBlock::ToolResult {
            tool_use_id,
            content: ResultContent(content),
            is_error: *is_error,
            cache_control: None,
        }),
        _ => None,
    });
    let others = message.content.iter().filter_map(move |block| match block {
        Block::ToolResult { .. } => None,
        Block::ToolUse {
            id,
            name,
            arguments,
        } if role == Role::Assistant => Some(OutBlock::ToolUse {
            id,
            name,
            input: ObjectArguments(arguments),
            cache_control: None,
        }),
        other => simple_block(other),
    });
    results.chain(others)
}

/// Text and images; `None` for empty text and for blocks that cannot appear
/// where they are.
fn simple_block(block: &Block) -> Option<OutBlock<'_>> {
    match block {
        Block::Text { text } if !text.is_empty() => Some(OutBlock::Text {
            text,
            cache_control: None,
        }),
        Block::Image {
            media_type,
            data_base64,
        } => Some(OutBlock::Image {
            source: ImageSource {
                kind: "base64",
                media_type,
                data: data_base64,
            },
            cache_control: None,
        }),
        _ => None,
    }
}

/// A message's `content`; with `cache_last`, its last block is a cache
/// breakpoint.
struct Content<I> {
    blocks: I,
    cache_last: bool,
}

impl<'a, I: Iterator<Item = OutBlock<'a>> + Clone> Serialize for Content<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let last = if self.cache_last {
            self.blocks.clone().count().checked_sub(1)
        } else {
            None
        };
        serializer.collect_seq(self.blocks.clone().enumerate().map(|(i, block)| {
            if last == Some(i) {
                block.cached()
            } else {
                block
            }
        }))
    }
}

/// One content block on the wire.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutBlock<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        /// `input` must be a JSON object.
        input: ObjectArguments<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "ResultContent::is_empty")]
        content: ResultContent<'a>,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl OutBlock<'_> {
    /// The block as a cache breakpoint.
    fn cached(mut self) -> Self {
        let (OutBlock::Text { cache_control, .. }
        | OutBlock::Image { cache_control, .. }
        | OutBlock::ToolUse { cache_control, .. }
        | OutBlock::ToolResult { cache_control, .. }) = &mut self;
        *cache_control = Some(CacheControl::Ephemeral);
        self
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

/// A tool result's text and images.
struct ResultContent<'a>(&'a [Block]);

impl ResultContent<'_> {
    fn is_empty(&self) -> bool {
        !self.0.iter().any(|block| simple_block(block).is_some())
    }
}

impl Serialize for ResultContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().filter_map(simple_block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::parsed;
    use crate::types::{Message, ToolDefinition};
    use serde_json::json;
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
        let body = parsed(&request_body(&request));
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
    fn empty_messages_are_dropped_and_the_breakpoint_moves_back() {
        let request = Request {
            model: "claude-haiku-4-5".into(),
            system: String::new(),
            messages: vec![
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        tool_use_id: "t1".into(),
                        content: vec![Block::Text {
                            text: String::new(),
                        }],
                        is_error: false,
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        Block::Text {
                            text: String::new(),
                        },
                        Block::ToolUse {
                            id: "t2".into(),
                            name: "Read".into(),
                            arguments: "{}".into(),
                        },
                    ],
                },
            ],
            tools: vec![],
            max_tokens: 8,
            temperature: Some(0.5),
        };
        let body = parsed(&request_body(&request));
        assert!(body.get("system").is_none());
        assert!(body.get("tools").is_none());
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [{
                "type": "tool_result",
                "tool_use_id": "t1",
                "cache_control": {"type": "ephemeral"},
            }]}])
        );
    }
}
