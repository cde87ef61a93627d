//! OpenAI Chat Completions (`POST /v1/chat/completions`).

use super::{Resolved, argument_fragments, sse_data, text_pieces};
use bytes::Bytes;
use serde_json::{Map, Value, json};

fn id(r: &Resolved) -> String {
    format!("chatcmpl-scripted{:04}", r.seq)
}

fn finish_reason(r: &Resolved) -> &'static str {
    if r.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

fn usage(r: &Resolved) -> Value {
    json!({
        "prompt_tokens": r.input_tokens,
        "completion_tokens": r.output_tokens,
        "total_tokens": r.input_tokens + r.output_tokens,
    })
}

/// The `chat.completion` object.
pub(super) fn body(r: &Resolved) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), json!(r.text));
    message.insert("refusal".into(), Value::Null);
    if !r.calls.is_empty() {
        let calls: Vec<Value> = r
            .calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({
        "id": id(r),
        "object": "chat.completion",
        "created": r.created(),
        "model": r.model,
        "system_fingerprint": null,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(r),
        }],
        "usage": usage(r),
    })
}

/// The `chat.completion.chunk` SSE events, ending with `data: [DONE]`.
///
/// Role first; then the text in several `content` deltas; then per tool
/// call a delta with `index`, `id`, `type`, `function.name` and empty
/// `arguments`, followed by up to three argument fragments under the same
/// `index`; then `finish_reason`; with `include_usage`, a `choices: []`
/// chunk with `usage` (and `"usage": null` on every earlier chunk, as
/// OpenAI does).
pub(super) fn events(r: &Resolved) -> Vec<Bytes> {
    choices_events(std::slice::from_ref(r))
}

/// [`events`] of a request for several choices (`n`): each choice's
/// chunks under its `index`, one after another, then one usage chunk for
/// them all and `[DONE]`.
pub(super) fn choices_events(rs: &[Resolved]) -> Vec<Bytes> {
    let mut out = Vec::new();
    for (index, r) in rs.iter().enumerate() {
        out.extend(choice_chunks(r, index));
    }
    let Some(r) = rs.first() else {
        return out;
    };
    if r.include_usage {
        let total = |field: fn(&Resolved) -> u64| rs.iter().map(field).sum::<u64>();
        let (input, output) = (total(|r| r.input_tokens), total(|r| r.output_tokens));
        let last = json!({
            "id": id(r),
            "object": "chat.completion.chunk",
            "created": r.created(),
            "model": r.model,
            "system_fingerprint": null,
            "choices": [],
            "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
        });
        out.push(sse_data(&last.to_string()));
    }
    out.push(sse_data("[DONE]"));
    out
}

/// One choice's chunks, under `index`.
fn choice_chunks(r: &Resolved, index: usize) -> Vec<Bytes> {
    let id = id(r);
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut c = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": r.created(),
            "model": r.model,
            "system_fingerprint": null,
            "choices": [{
                "index": index,
                "delta": delta,
                "logprobs": null,
                "finish_reason": finish,
            }],
        });
        if r.include_usage {
            c["usage"] = Value::Null;
        }
        sse_data(&c.to_string())
    };

    let mut out = vec![chunk(json!({"role": "assistant"}), None)];
    if let Some(text) = &r.text {
        for piece in text_pieces(text) {
            out.push(chunk(json!({"content": piece}), None));
        }
    }
    for (slot, call) in r.calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{
                "index": slot,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }]}),
            None,
        ));
        for fragment in argument_fragments(&call.arguments) {
            out.push(chunk(
                json!({"tool_calls": [{
                    "index": slot,
                    "function": {"arguments": fragment},
                }]}),
                None,
            ));
        }
    }
    out.push(chunk(json!({}), Some(finish_reason(r))));
    out
}

/// `{"error": {"message", "type", "param", "code"}}` with OpenAI's types
/// and codes for the common statuses.
pub(super) fn error(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        400 => ("invalid_request_error", Value::Null),
        401 => ("invalid_request_error", json!("invalid_api_key")),
        403 => ("permission_error", Value::Null),
        404 => ("invalid_request_error", json!("model_not_found")),
        429 => ("requests", json!("rate_limit_exceeded")),
        503 => ("server_error", json!("service_unavailable")),
        s if s >= 500 => ("server_error", Value::Null),
        _ => ("invalid_request_error", Value::Null),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}
