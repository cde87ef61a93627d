//! Decoding Ollama's NDJSON stream: one JSON object per line, text in
//! `message.content`, whole tool calls in `message.tool_calls`, usage and
//! `done_reason` on the last line (`done: true`).

use crate::http::StreamDecoder;
use crate::retry::AttemptError;
use crate::sse::LineSplitter;
use crate::types::{Block, EventSink, LlmErrorKind, Response, StopReason, StreamEvent, Usage};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The state of one streamed response.
#[derive(Debug)]
pub(crate) struct Decoder {
    lines: LineSplitter,
    model: String,
    text: String,
    calls: Vec<Block>,
    next_call: Arc<AtomicU64>,
    usage: Usage,
    done_reason: Option<String>,
    done: bool,
}

impl Decoder {
    /// A decoder; `model` stands in if the stream never names one, and
    /// `next_call` numbers the tool calls.
    pub fn new(model: String, next_call: Arc<AtomicU64>) -> Self {
        Decoder {
            lines: LineSplitter::default(),
            model,
            text: String::new(),
            calls: Vec::new(),
            next_call,
            usage: Usage::default(),
            done_reason: None,
            done: false,
        }
    }

    fn line(&mut self, line: &str, events: EventSink<'_>) -> Result<(), AttemptError> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let data: Value = serde_json::from_str(line).map_err(|error| {
            AttemptError::fatal(
                LlmErrorKind::InvalidResponse,
                format!("Ollama sent a line that is not JSON ({error})"),
            )
        })?;
        if let Some(error) = data.get("error") {
            return Err(crate::wire::mid_stream_error("Ollama", error));
        }
        crate::wire::update_model(&mut self.model, &data);
        if let Some(message) = data.get("message") {
            if let Some(text) = message
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.text.push_str(text);
                events(StreamEvent::TextDelta(text.to_string()));
            }
            for call in message
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.tool_call(call, events);
            }
        }
        if data.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            self.done_reason = data
                .get("done_reason")
                .and_then(Value::as_str)
                .map(str::to_string);
            let count = |key: &str| data.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage.input_tokens = count("prompt_eval_count");
            self.usage.output_tokens = count("eval_count");
        }
        Ok(())
    }

    /// Ollama sends each call whole, its arguments as an object (or, from
    /// some models, a JSON string holding the object), and without an id.
    fn tool_call(&mut self, call: &Value, events: EventSink<'_>) {
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let arguments = match function.get("arguments") {
            Some(Value::String(raw)) => raw.clone(),
            None | Some(Value::Null) => "{}".to_string(),
            Some(other) => other.to_string(),
        };
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(
                || format!("call_{}", self.next_call.fetch_add(1, Ordering::Relaxed)),
                str::to_string,
            );
        events(StreamEvent::ToolCallStarted {
            id: id.clone(),
            name: name.clone(),
        });
        self.calls.push(Block::ToolUse {
            id,
            name,
            arguments,
        });
    }
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, chunk: &[u8], events: EventSink<'_>) -> Result<(), AttemptError> {
        for line in self.lines.push(chunk) {
            self.line(&line, events)?;
        }
        Ok(())
    }

    fn finish(&mut self, events: EventSink<'_>) -> Result<Response, AttemptError> {
        let truncated = || {
            AttemptError::transient(
                LlmErrorKind::InvalidResponse,
                "Ollama's stream ended before its `done` line (truncated)",
            )
        };
        // A last line without its newline may be a cut one.
        if let Some(line) = self.lines.finish() {
            self.line(&line, events).map_err(|_| truncated())?;
        }
        if !self.done {
            return Err(truncated());
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Block::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        let has_calls = !self.calls.is_empty();
        content.append(&mut self.calls);
        // Ollama says "stop" after tool calls too.
        let stop_reason = match self.done_reason.as_deref() {
            _ if has_calls => StopReason::ToolUse,
            Some("stop") | None => StopReason::EndTurn,
            Some("length") => StopReason::MaxTokens,
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
        decode_stream(
            Decoder::new("fallback".into(), Arc::new(AtomicU64::new(7))),
            body,
            chunk_size,
        )
    }

    const STREAM: &str = concat!(
        "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n",
        "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"Read\",\"arguments\":{\"path\":\"a\"}}},{\"function\":{\"name\":\"Bash\",\"arguments\":\"{\\\"command\\\": \\\"ls\\\"\"}}]},\"done\":false}\n",
        "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,\"prompt_eval_count\":26,\"eval_count\":9}\n",
    );

    #[test]
    fn text_calls_and_usage() {
        for size in [1, 10, STREAM.len()] {
            let (response, events) = decode(STREAM, size);
            let response = response.expect("decoded");
            assert_eq!(response.text(), "Hi");
            let calls: Vec<_> = response.tool_calls().collect();
            assert_eq!(
                calls,
                vec![
                    ("call_7", "Read", "{\"path\":\"a\"}"),
                    ("call_8", "Bash", "{\"command\": \"ls\"")
                ]
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(response.usage.input_tokens, 26);
            assert_eq!(response.usage.output_tokens, 9);
            assert_eq!(events.len(), 3);
        }
    }

    #[test]
    fn last_line_without_newline_and_truncation() {
        assert!(decode(STREAM.trim_end(), 7).0.is_ok());
        let cut = &STREAM[..STREAM.len() - 20];
        let error = decode(cut, 7).0.expect_err("truncated");
        assert!(error.retryable);
        let error = decode("{\"error\":\"boom\"}\n", 7).0.expect_err("error");
        assert!(error.message.contains("boom"));
    }
}
