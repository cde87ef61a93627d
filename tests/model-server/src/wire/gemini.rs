//! Gemini (`POST /v1beta/models/{model}:generateContent`, and
//! `:streamGenerateContent?alt=sse`), as Gemini CLI speaks it.

use super::{Resolved, arguments_value, sse_data, text_pieces};
use bytes::Bytes;
use serde_json::{Value, json};

fn response_id(r: &Resolved) -> String {
    format!("scripted{:04}", r.seq)
}

/// The full usage on the final chunk; earlier chunks carry only the prompt
/// tokens, as Gemini sends them.
fn usage(r: &Resolved, last: bool) -> Value {
    if last {
        json!({
            "promptTokenCount": r.input_tokens,
            "candidatesTokenCount": r.output_tokens,
            "totalTokenCount": r.input_tokens + r.output_tokens,
        })
    } else {
        json!({"promptTokenCount": r.input_tokens, "totalTokenCount": r.input_tokens})
    }
}

/// One `functionCall` part per call. Gemini has no call ids (the scripted
/// ones are dropped) and carries arguments as a JSON value: malformed
/// text is sent as a JSON string, as on the other wires whose arguments
/// are values, so a test sees how the client copes with a non-object.
fn call_parts(r: &Resolved) -> Vec<Value> {
    r.calls
        .iter()
        .map(|call| {
            json!({"functionCall": {
                "name": call.name,
                "args": arguments_value(&call.arguments),
            }})
        })
        .collect()
}

/// A `GenerateContentResponse` with one candidate holding `parts`; the
/// last one has `finishReason: STOP` and the full usage.
fn chunk(r: &Resolved, parts: Vec<Value>, last: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if last {
        candidate["finishReason"] = json!("STOP");
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage(r, last),
        "modelVersion": r.model,
        "responseId": response_id(r),
    })
}

/// The whole answer in one response: a text part first when the reply has
/// text, then the calls.
pub(super) fn body(r: &Resolved) -> Value {
    let text = r.text.as_deref().map(|t| json!({"text": t}));
    let parts = text.into_iter().chain(call_parts(r)).collect();
    chunk(r, parts, true)
}

/// SSE events with only `data:` lines: the text in several chunks, then
/// one chunk with every call (Gemini sends calls whole, never in
/// fragments). The last of them finishes; an empty reply is a single
/// finishing chunk with an empty text part.
pub(super) fn events(r: &Resolved) -> Vec<Bytes> {
    let mut parts: Vec<Vec<Value>> = r
        .text
        .as_deref()
        .map(text_pieces)
        .unwrap_or_default()
        .into_iter()
        .map(|piece| vec![json!({"text": piece})])
        .collect();
    if !r.calls.is_empty() {
        parts.push(call_parts(r));
    }
    if parts.is_empty() {
        parts.push(vec![json!({"text": ""})]);
    }
    let last = parts.len() - 1;
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| sse_data(&chunk(r, p, i == last).to_string()))
        .collect()
}

/// `{"error": {"code", "message", "status"}}` with Google's status names
/// for the common codes.
pub(super) fn error(code: u16, message: &str) -> Value {
    let status = match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        s if s >= 500 => "INTERNAL",
        _ => "INVALID_ARGUMENT",
    };
    json!({"error": {"code": code, "message": message, "status": status}})
}
