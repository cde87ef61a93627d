//! Decoding a streamed Messages body: `message_start`, content blocks built
//! from `text_delta` and `input_json_delta`, `message_delta` with the stop
//! reason and output usage, then `message_stop`.

use crate::http::StreamDecoder;
use crate::retry::AttemptError;
use crate::sse::{SseEvent, SseParser};
use crate::types::{Block, EventSink, LlmErrorKind, Response, StopReason, StreamEvent, Usage};
use serde_json::Value;

/// A content block being streamed.
#[derive(Debug)]
enum Partial {
    Text(String),
    Tool {
        id: String,
        name: String,
        /// `partial_json` fragments, concatenated: the raw arguments.
        json: String,
        /// The `input` of `content_block_start`, used when no fragment came.
        start_input: Value,
    },
    /// Thinking and server-tool blocks, which the loop does not use.
    Ignored,
}

/// The state of one streamed response.
#[derive(Debug)]
pub(crate) struct Decoder {
    sse: SseParser,
    model: String,
    blocks: Vec<(u64, Partial)>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

impl Decoder {
    /// A decoder; `model` stands in if the stream never names one.
    pub fn new(model: String) -> Self {
        Decoder {
            sse: SseParser::default(),
            model,
            blocks: Vec::new(),
            usage: Usage::default(),
            stop_reason: None,
            done: false,
        }
    }

    fn block(&mut self, index: u64) -> Option<&mut Partial> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    fn event(&mut self, event: SseEvent, events: EventSink<'_>) -> Result<(), AttemptError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|error| {
            AttemptError::fatal(
                LlmErrorKind::InvalidResponse,
                format!("Anthropic sent an event that is not JSON ({error})"),
            )
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        let str_at = |pointer: &str| data.pointer(pointer).and_then(Value::as_str);
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(model) = str_at("/message/model").filter(|m| !m.is_empty()) {
                    self.model = model.to_string();
                }
                if let Some(usage) = data.pointer("/message/usage") {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let partial = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        if !text.is_empty() {
                            events(StreamEvent::TextDelta(text.to_string()));
                        }
                        Partial::Text(text.to_string())
                    }
                    Some("tool_use") => {
                        let id = block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let name = block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        events(StreamEvent::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Partial::Tool {
                            id,
                            name,
                            json: String::new(),
                            start_input: block.get("input").cloned().unwrap_or(Value::Null),
                        }
                    }
                    _ => Partial::Ignored,
                };
                self.blocks.push((index, partial));
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let delta_type = delta.get("type").and_then(Value::as_str);
                match (self.block(index), delta_type) {
                    (Some(Partial::Text(text)), Some("text_delta")) => {
                        let piece = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        text.push_str(piece);
                        if !piece.is_empty() {
                            events(StreamEvent::TextDelta(piece.to_string()));
                        }
                    }
                    (Some(Partial::Tool { json, .. }), Some("input_json_delta")) => {
                        json.push_str(
                            delta
                                .get("partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or(""),
                        );
                    }
                    // Thinking and signature deltas, or a delta for a block
                    // that never started: nothing the response needs.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = str_at("/delta/stop_reason") {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => self.done = true,
            "error" => return Err(stream_error(&data)),
            // ping, content_block_stop, and event types added later.
            _ => {}
        }
        Ok(())
    }

    /// Counts in `message_delta` are cumulative, so each one present
    /// replaces the earlier value.
    fn read_usage(&mut self, usage: &Value) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(n) = count("input_tokens") {
            self.usage.input_tokens = n;
        }
        if let Some(n) = count("output_tokens") {
            self.usage.output_tokens = n;
        }
        if let Some(n) = count("cache_read_input_tokens") {
            self.usage.cache_read_tokens = n;
        }
        if let Some(n) = count("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = n;
        }
    }
}

/// An `error` event: overloaded and internal errors are worth a retry.
fn stream_error(data: &Value) -> AttemptError {
    let kind = data
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let message = data
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    let text = format!("Anthropic reported {kind} mid-stream: {message}");
    match kind {
        "overloaded_error" | "api_error" => AttemptError::transient(LlmErrorKind::Server, text),
        "rate_limit_error" => AttemptError::transient(LlmErrorKind::RateLimited, text),
        "authentication_error" | "permission_error" => AttemptError::fatal(
            LlmErrorKind::Auth,
            format!("{text}; check ANTHROPIC_API_KEY"),
        ),
        _ => AttemptError::fatal(LlmErrorKind::BadRequest, text),
    }
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, chunk: &[u8], events: EventSink<'_>) -> Result<(), AttemptError> {
        for event in self.sse.push(chunk) {
            self.event(event, events)?;
        }
        Ok(())
    }

    fn finish(&mut self, events: EventSink<'_>) -> Result<Response, AttemptError> {
        let truncated = || {
            AttemptError::transient(
                LlmErrorKind::InvalidResponse,
                "Anthropic's stream ended before message_stop (truncated)",
            )
        };
        // An event without its blank line was most likely cut short.
        for event in self.sse.finish() {
            self.event(event, events).map_err(|_| truncated())?;
        }
        if !self.done {
            return Err(truncated());
        }
        let mut blocks = std::mem::take(&mut self.blocks);
        blocks.sort_by_key(|(index, _)| *index);
        let content = blocks
            .into_iter()
            .filter_map(|(_, partial)| match partial {
                Partial::Text(text) if !text.is_empty() => Some(Block::Text { text }),
                Partial::Tool {
                    id,
                    name,
                    json,
                    start_input,
                } => {
                    let arguments = if !json.is_empty() {
                        json
                    } else if start_input.is_null() {
                        "{}".to_string()
                    } else {
                        start_input.to_string()
                    };
                    Some(Block::ToolUse {
                        id,
                        name,
                        arguments,
                    })
                }
                _ => None,
            })
            .collect();
        let stop_reason = match self.stop_reason.as_deref() {
            Some("end_turn") | None => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
        };
        Ok(Response {
            content,
            usage: self.usage,
            stop_reason,
            model: std::mem::take(&mut self.model),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::decode_stream;

    /// This provider's decoder, as the shared fixture drives it.
    fn decode(body: &str, chunk_size: usize) -> (Result<Response, AttemptError>, Vec<StreamEvent>) {
        decode_stream(Decoder::new("fallback".into()), body, chunk_size)
    }

    const STREAM: &str = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude-sonnet-4-5-20250929\",\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":200,\"cache_read_input_tokens\":300,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"look.\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Read\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\".rs\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"Glob\",\"input\":{}}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":42}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );

    #[test]
    fn assembles_text_and_tool_calls_whatever_the_chunking() {
        for size in [1, 13, STREAM.len()] {
            let (response, events) = decode(STREAM, size);
            let response = response.expect("decoded");
            assert_eq!(response.text(), "Let me look.");
            let calls: Vec<_> = response.tool_calls().collect();
            assert_eq!(
                calls,
                vec![
                    ("toolu_1", "Read", "{\"path\": \"a.rs\"}"),
                    ("toolu_2", "Glob", "{}")
                ]
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(response.model, "claude-sonnet-4-5-20250929");
            assert_eq!(
                response.usage,
                Usage {
                    input_tokens: 10,
                    output_tokens: 42,
                    cache_read_tokens: 300,
                    cache_write_tokens: 200
                }
            );
            assert_eq!(
                events,
                vec![
                    StreamEvent::TextDelta("Let me ".into()),
                    StreamEvent::TextDelta("look.".into()),
                    StreamEvent::ToolCallStarted {
                        id: "toolu_1".into(),
                        name: "Read".into()
                    },
                    StreamEvent::ToolCallStarted {
                        id: "toolu_2".into(),
                        name: "Glob".into()
                    },
                ]
            );
        }
    }

    #[test]
    fn truncated_stream_is_transient() {
        let cut = &STREAM[..STREAM.find("event: message_delta").expect("delta") + 30];
        let error = decode(cut, 11).0.expect_err("truncated");
        assert!(error.retryable);
        assert_eq!(error.kind, LlmErrorKind::InvalidResponse);
    }

    #[test]
    fn error_events() {
        let body = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        let error = decode(body, 8).0.expect_err("error");
        assert!(error.retryable);
        assert_eq!(error.kind, LlmErrorKind::Server);
        let body = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"no\"}}\n\n";
        let error = decode(body, 8).0.expect_err("error");
        assert!(!error.retryable);
        assert_eq!(error.kind, LlmErrorKind::BadRequest);
    }
}
