//! Decoding a streamed Chat Completions body: SSE chunks of `delta`s, tool
//! calls assembled by `index`, usage from the final chunk, then `[DONE]`.

use crate::http::StreamDecoder;
use crate::retry::AttemptError;
use crate::sse::{SseEvent, SseParser};
use crate::types::{Block, EventSink, LlmErrorKind, Response, StopReason, StreamEvent, Usage};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A tool call being assembled from its deltas.
#[derive(Debug, Default)]
struct ToolSlot {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// The state of one streamed response.
#[derive(Debug)]
pub(crate) struct Decoder {
    sse: SseParser,
    /// The choice it decodes (0 unless the request asked for several).
    choice: u64,
    /// Whether any chunk of its choice came.
    seen: bool,
    model: String,
    text: String,
    calls: Vec<ToolSlot>,
    by_index: HashMap<u64, usize>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl Decoder {
    /// A decoder; `model` stands in if the chunks never name one.
    pub fn new(model: String) -> Self {
        Self::for_choice(model, 0)
    }

    /// A decoder of choice `choice` of a response with several.
    pub fn for_choice(model: String, choice: u64) -> Self {
        Decoder {
            sse: SseParser::default(),
            choice,
            seen: false,
            model,
            text: String::new(),
            calls: Vec::new(),
            by_index: HashMap::new(),
            finish_reason: None,
            usage: None,
            done: false,
        }
    }

    fn event(&mut self, event: SseEvent, events: EventSink<'_>) -> Result<(), AttemptError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            AttemptError::fatal(
                LlmErrorKind::InvalidResponse,
                format!(
                    "OpenAI sent a chunk that is not JSON ({error}): {}",
                    preview(data)
                ),
            )
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(crate::wire::mid_stream_error("OpenAI", error));
        }
        crate::wire::update_model(&mut self.model, &chunk);
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        let Some(choice) = choices.and_then(|c| {
            c.iter().find(|choice| {
                choice.get("index").and_then(Value::as_u64).unwrap_or(0) == self.choice
            })
        }) else {
            return Ok(());
        };
        self.seen = true;
        if let Some(delta) = choice.get("delta") {
            for key in ["content", "refusal"] {
                if let Some(text) = delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    self.text.push_str(text);
                    events(StreamEvent::TextDelta(text.to_string()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.tool_delta(call, events);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    /// Adds one tool-call delta to its slot. OpenAI sends `index`, and the id
    /// and name only in a call's first delta; some compatible servers omit
    /// `index` or reuse it for several calls, which a new id reveals.
    fn tool_delta(&mut self, delta: &Value, events: EventSink<'_>) {
        let id = delta
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let same_call =
            |slot: &ToolSlot| id.is_none() || slot.id.is_empty() || Some(slot.id.as_str()) == id;
        let existing = match delta.get("index").and_then(Value::as_u64) {
            Some(index) => self.by_index.get(&index).copied(),
            None => self.calls.len().checked_sub(1),
        }
        .filter(|&slot| same_call(&self.calls[slot]));
        let slot = match existing {
            Some(slot) => slot,
            None => {
                self.calls.push(ToolSlot::default());
                let slot = self.calls.len() - 1;
                if let Some(index) = delta.get("index").and_then(Value::as_u64) {
                    self.by_index.insert(index, slot);
                }
                slot
            }
        };
        let call = &mut self.calls[slot];
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        let function = delta.get("function");
        if let Some(name) = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
        if let Some(fragment) = function.and_then(|f| f.get("arguments")) {
            match fragment {
                Value::String(text) => call.arguments.push_str(text),
                // Some servers send the arguments as an object, whole.
                Value::Null => {}
                other => call.arguments.push_str(&other.to_string()),
            }
        }
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            if call.id.is_empty() {
                call.id = format!("call_{slot}");
            }
            events(StreamEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
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
                "OpenAI's stream ended before [DONE] (truncated)",
            )
        };
        // An event left without its blank line is most likely cut short, so
        // if it does not parse, the stream was truncated.
        for event in self.sse.finish() {
            self.event(event, events).map_err(|_| truncated())?;
        }
        // Without `[DONE]` the stream was cut, unless everything that comes
        // before it (the finish reason, then usage) already arrived.
        let complete = self.done || (self.finish_reason.is_some() && self.usage.is_some());
        if !complete {
            return Err(truncated());
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Block::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        for (slot, call) in self.calls.drain(..).enumerate() {
            if call.name.is_empty() {
                continue; // a fragment with no call to belong to
            }
            content.push(Block::ToolUse {
                id: if call.id.is_empty() {
                    format!("call_{slot}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            });
        }
        let has_calls = content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let stop_reason = match self.finish_reason.as_deref() {
            Some("stop") | None if !has_calls => StopReason::EndTurn,
            Some("tool_calls" | "function_call") | None => StopReason::ToolUse,
            Some("stop") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
        };
        Ok(Response {
            content,
            usage: self.usage.unwrap_or_default(),
            stop_reason,
            model: std::mem::take(&mut self.model),
        })
    }
}

/// Every choice of a response that has several (`n > 1`), each decoded on
/// its own from the same stream. The first is the stream's [`Response`];
/// the others go to `rest`. The usage, reported once for the whole
/// request, stays on the first.
pub(crate) struct Choices {
    decoders: Vec<Decoder>,
    rest: Arc<Mutex<Vec<Response>>>,
}

impl Choices {
    /// Decoders for `n` choices.
    pub fn new(model: String, n: u32, rest: Arc<Mutex<Vec<Response>>>) -> Self {
        let decoders = (0..u64::from(n.max(1)))
            .map(|choice| Decoder::for_choice(model.clone(), choice))
            .collect();
        Self { decoders, rest }
    }
}

impl StreamDecoder for Choices {
    fn feed(&mut self, chunk: &[u8], events: EventSink<'_>) -> Result<(), AttemptError> {
        for decoder in &mut self.decoders {
            decoder.feed(chunk, events)?;
        }
        Ok(())
    }

    fn finish(&mut self, events: EventSink<'_>) -> Result<Response, AttemptError> {
        let mut responses = Vec::with_capacity(self.decoders.len());
        for (index, decoder) in self.decoders.iter_mut().enumerate() {
            // A server that gave fewer choices than asked for.
            if index > 0 && !decoder.seen {
                continue;
            }
            let mut response = decoder.finish(events)?;
            if index > 0 {
                response.usage = Usage::default();
            }
            responses.push(response);
        }
        let first = responses.remove(0);
        *self.rest.lock().unwrap_or_else(|e| e.into_inner()) = responses;
        Ok(first)
    }
}

/// `prompt_tokens` counts cached tokens too; [`Usage::input_tokens`] is only
/// those billed at the full rate.
fn parse_usage(usage: &Value) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let prompt = count("/prompt_tokens");
    let cached = count("/prompt_tokens_details/cached_tokens").min(prompt);
    Usage {
        input_tokens: prompt - cached,
        output_tokens: count("/completion_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    }
}

fn preview(data: &str) -> String {
    data.chars().take(200).collect()
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
        "data: {\"id\":\"c\",\"model\":\"gpt-4o-2024\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"Read\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"pa\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"function\":{\"name\":\"Glob\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"a\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"prompt_tokens_details\":{\"cached_tokens\":60}}}\n\n",
        "data: [DONE]\n\n",
    );

    #[test]
    fn assembles_text_and_tool_calls_whatever_the_chunking() {
        for size in [1, 7, 64, STREAM.len()] {
            let (response, events) = decode(STREAM, size);
            let response = response.expect("decoded");
            assert_eq!(response.text(), "Hello");
            let calls: Vec<_> = response.tool_calls().collect();
            assert_eq!(
                calls,
                vec![
                    ("call_a", "Read", "{\"path\":\"a\"}"),
                    ("call_b", "Glob", "{}")
                ]
            );
            assert_eq!(response.stop_reason, StopReason::ToolUse);
            assert_eq!(response.model, "gpt-4o-2024");
            assert_eq!(
                response.usage,
                Usage {
                    input_tokens: 40,
                    output_tokens: 20,
                    cache_read_tokens: 60,
                    cache_write_tokens: 0
                }
            );
            assert_eq!(events[0], StreamEvent::TextDelta("Hel".into()));
            assert_eq!(
                events[2],
                StreamEvent::ToolCallStarted {
                    id: "call_a".into(),
                    name: "Read".into()
                }
            );
            assert_eq!(events.len(), 4);
        }
    }

    #[test]
    fn truncated_stream_is_a_transient_error() {
        let cut = &STREAM[..STREAM
            .find("\"finish_reason\":\"tool_calls\"")
            .expect("finish")];
        let (response, _) = decode(cut, 16);
        let error = response.expect_err("truncated");
        assert!(error.retryable);
        assert_eq!(error.kind, LlmErrorKind::InvalidResponse);
    }

    #[test]
    fn missing_done_after_usage_is_accepted() {
        let body = STREAM.replace("data: [DONE]\n\n", "");
        assert!(decode(&body, 5).0.is_ok());
    }

    #[test]
    fn calls_without_index_and_reused_indexes() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"x\",\"function\":{\"name\":\"A\",\"arguments\":{\"k\":1}}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"y\",\"function\":{\"name\":\"B\",\"arguments\":\"{\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"z\",\"function\":{\"name\":\"C\",\"arguments\":\"\"}}]},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        let response = decode(body, 3).0.expect("decoded");
        let calls: Vec<_> = response.tool_calls().collect();
        assert_eq!(
            calls,
            vec![("x", "A", "{\"k\":1}"), ("y", "B", "{"), ("z", "C", "")]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn errors_and_stop_reasons() {
        let (response, _) = decode("data: {\"error\":{\"message\":\"overloaded\"}}\n\n", 4);
        let error = response.expect_err("error");
        assert!(error.retryable && error.message.contains("overloaded"));
        let (response, _) = decode("data: {nope\n\n", 4);
        assert!(!response.expect_err("bad json").retryable);
        let body = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
        let response = decode(body, 9).0.expect("decoded");
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert_eq!(response.model, "fallback");
    }
}
