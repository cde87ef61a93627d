//! The `/api/chat` request body, serialized straight from the borrowed
//! [`Request`]: no `Value` tree, no copy of the conversation.

use crate::types::{Block, Message, Request, Role};
use crate::wire::{FunctionTools, Joined, ObjectArguments, Texts, joined_texts};
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use std::collections::HashMap;

/// The `/api/chat` body for `request`, borrowing from it.
pub(crate) fn request_body(request: &Request) -> Body<'_> {
    Body {
        model: &request.model,
        messages: Messages {
            system: &request.system,
            messages: &request.messages,
        },
        stream: true,
        options: Options {
            num_predict: request.max_tokens,
            // Widened as `json!` did: the wire value stays the f32's exact
            // value.
            temperature: request.temperature.map(f64::from),
        },
        tools: FunctionTools(&request.tools),
    }
}

/// An `/api/chat` request body.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    stream: bool,
    options: Options,
    #[serde(skip_serializing_if = "FunctionTools::is_empty")]
    tools: FunctionTools<'a>,
}

#[derive(Serialize)]
struct Options {
    num_predict: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

/// The system prompt, then the conversation. A user turn becomes its tool
/// results first, as `tool` messages; then a user message with the text and
/// the images (tool results' images too, which `tool` messages cannot
/// carry).
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
        // Tool results name their tool, which Ollama wants and the results
        // only know by call id.
        let mut tool_names: HashMap<&str, &str> = HashMap::new();
        for message in self.messages {
            let blocks = message.content.as_slice();
            match message.role {
                Role::Assistant => {
                    for block in blocks {
                        if let Block::ToolUse { id, name, .. } = block {
                            tool_names.insert(id, name);
                        }
                    }
                    seq.serialize_element(&Out::Assistant {
                        content: joined_texts(blocks, ""),
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
                                content: joined_texts(content, "\n"),
                                tool_name: tool_names.get(tool_use_id.as_str()).copied(),
                            })?;
                        }
                    }
                    let images = Images(blocks);
                    let has_text = blocks
                        .iter()
                        .any(|block| matches!(block, Block::Text { .. }));
                    if has_text || !images.is_empty() {
                        seq.serialize_element(&Out::User {
                            content: joined_texts(blocks, "\n"),
                            images,
                        })?;
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
        content: Joined<Texts<'a>>,
        #[serde(skip_serializing_if = "ToolCalls::is_empty")]
        tool_calls: ToolCalls<'a>,
    },
    Tool {
        content: Joined<Texts<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_name: Option<&'a str>,
    },
    User {
        content: Joined<Texts<'a>>,
        #[serde(skip_serializing_if = "Images::is_empty")]
        images: Images<'a>,
    },
}

/// An assistant turn's `ToolUse` blocks, their arguments as objects.
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
    function: CalledFunction<'a>,
}

#[derive(Serialize)]
struct CalledFunction<'a> {
    name: &'a str,
    arguments: ObjectArguments<'a>,
}

impl Serialize for ToolCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().filter_map(|block| match block {
            Block::ToolUse {
                name, arguments, ..
            } => Some(ToolCall {
                function: CalledFunction {
                    name,
                    arguments: ObjectArguments(arguments),
                },
            }),
            _ => None,
        }))
    }
}

/// The base64 of a user turn's images and its tool results' images, in
/// order.
struct Images<'a>(&'a [Block]);

impl<'a> Images<'a> {
    fn iter(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.0
            .iter()
            .flat_map(|block| match block {
                Block::ToolResult { content, .. } => content.as_slice(),
                other => std::slice::from_ref(other),
            })
            .filter_map(|block| match block {
                Block::Image { data_base64, .. } => Some(data_base64.as_str()),
                _ => None,
            })
    }

    fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

impl Serialize for Images<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::parsed;
    use crate::types::{Message, ToolDefinition};
    use serde_json::json;

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
        let body = parsed(&request_body(&request));
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

    #[test]
    fn unknown_tool_names_and_text_only_turns() {
        let request = Request {
            model: "llama3.2".into(),
            system: String::new(),
            messages: vec![
                Message {
                    role: Role::User,
                    content: vec![
                        Block::ToolResult {
                            tool_use_id: "later".into(),
                            content: vec![],
                            is_error: true,
                        },
                        Block::Text { text: "a".into() },
                        Block::Text { text: "b".into() },
                    ],
                },
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolUse {
                        id: "later".into(),
                        name: "Read".into(),
                        arguments: "[1]".into(),
                    }],
                },
            ],
            tools: vec![],
            max_tokens: 8,
            temperature: None,
        };
        let body = parsed(&request_body(&request));
        assert_eq!(body["options"], json!({"num_predict": 8}));
        assert!(body.get("tools").is_none());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "tool", "content": ""},
                {"role": "user", "content": "a\nb"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "Read", "arguments": {}}},
                ]},
            ])
        );
    }
}
