//! Pieces shared by the providers' request bodies, which are serialized
//! straight from the borrowed [`Request`](crate::types::Request) to bytes:
//! no `serde_json::Value` tree, no copy of the conversation's strings.
//!
//! Strings made of several parts (joined texts, data URLs) implement
//! `Display` and serialize through `Serializer::collect_str`, which
//! serde_json writes piece by piece, escaped, into the output.

use crate::retry::AttemptError;
use crate::types::{Block, LlmError, LlmErrorKind, ToolDefinition};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};
use std::fmt;
use std::iter::FilterMap;
use std::slice::Iter;

/// The JSON bytes of a request body.
/// Replaces `model` with a streamed chunk's non-empty `model` field.
pub(crate) fn update_model(model: &mut String, chunk: &Value) {
    if let Some(name) = chunk
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
    {
        name.clone_into(model);
    }
}

/// The retryable error for an `error` object (or string) a provider sent
/// in the middle of a stream.
pub(crate) fn mid_stream_error(provider: &str, error: &Value) -> AttemptError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map_or_else(|| error.to_string(), str::to_string);
    AttemptError::transient(
        LlmErrorKind::Server,
        format!("{provider} reported an error mid-stream: {message}"),
    )
}

pub(crate) fn to_bytes(body: &impl Serialize) -> Result<Vec<u8>, LlmError> {
    serde_json::to_vec(body).map_err(|error| LlmError {
        kind: LlmErrorKind::BadRequest,
        message: format!("could not encode the request body: {error}"),
    })
}

/// The texts of `Text` blocks, empty ones included, in order.
pub(crate) type Texts<'a> = FilterMap<Iter<'a, Block>, fn(&'a Block) -> Option<&'a str>>;

/// The texts of `blocks`' `Text` blocks, empty ones included.
pub(crate) fn texts(blocks: &[Block]) -> Texts<'_> {
    fn text(block: &Block) -> Option<&str> {
        match block {
            Block::Text { text } => Some(text),
            _ => None,
        }
    }
    blocks.iter().filter_map(text)
}

/// Strings joined by a separator, serialized as one JSON string.
#[derive(Clone)]
pub(crate) struct Joined<I> {
    /// The strings.
    pub parts: I,
    /// Written between two strings.
    pub separator: &'static str,
}

impl<'a, I: Iterator<Item = &'a str> + Clone> fmt::Display for Joined<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, part) in self.parts.clone().enumerate() {
            if i > 0 {
                f.write_str(self.separator)?;
            }
            f.write_str(part)?;
        }
        Ok(())
    }
}

impl<'a, I: Iterator<Item = &'a str> + Clone> Serialize for Joined<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The texts of `blocks` joined by `separator`.
pub(crate) fn joined_texts<'a>(blocks: &'a [Block], separator: &'static str) -> Joined<Texts<'a>> {
    Joined {
        parts: texts(blocks),
        separator,
    }
}

/// Tool arguments as the JSON object the model meant: malformed arguments,
/// or JSON that is not an object, become `{}` (the model already saw what
/// was wrong in the tool result).
pub(crate) struct ObjectArguments<'a>(pub &'a str);

impl Serialize for ObjectArguments<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match serde_json::from_str::<Map<String, Value>>(self.0) {
            Ok(object) => object.serialize(serializer),
            Err(_) => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

/// Tool definitions in the `{"type": "function", "function": {...}}` shape
/// of OpenAI and Ollama.
pub(crate) struct FunctionTools<'a>(pub &'a [ToolDefinition]);

impl FunctionTools<'_> {
    /// No tools: the field is left out.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionSpec<'a>,
}

#[derive(Serialize)]
struct FunctionSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl Serialize for FunctionTools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|tool| FunctionTool {
            kind: "function",
            function: FunctionSpec {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.input_schema,
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::parsed;
    use serde_json::json;

    #[test]
    fn joined_strings_are_escaped_piece_by_piece() {
        let blocks = [
            Block::Text {
                text: "a \"quoted\"".into(),
            },
            Block::Image {
                media_type: "image/png".into(),
                data_base64: "AAA=".into(),
            },
            Block::Text {
                text: String::new(),
            },
            Block::Text {
                text: "tab\there\u{1}".into(),
            },
        ];
        let joined = joined_texts(&blocks, "\n");
        assert_eq!(parsed(&joined), json!("a \"quoted\"\n\ntab\there\u{1}"));
        assert_eq!(
            serde_json::to_value(&joined).expect("value"),
            parsed(&joined)
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_become_empty() {
        for (arguments, expected) in [
            (r#"{"b": 1, "a": [true]}"#, json!({"a": [true], "b": 1})),
            (r#"{"a": 1, "a": 2}"#, json!({"a": 2})),
            (r#"{"path":"#, json!({})),
            ("[1]", json!({})),
            ("", json!({})),
            ("{} x", json!({})),
        ] {
            assert_eq!(parsed(&ObjectArguments(arguments)), expected, "{arguments}");
        }
    }
}
