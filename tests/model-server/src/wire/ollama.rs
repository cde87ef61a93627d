//! Ollama chat (`POST /api/chat`).

use super::{Resolved, arguments_value, rfc3339, text_pieces};
use bytes::Bytes;
use serde_json::{Value, json};

fn tool_calls(r: &Resolved) -> Value {
    r.calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            json!({"function": {
                "index": index,
                "name": call.name,
                "arguments": arguments_value(&call.arguments),
            }})
        })
        .collect()
}

/// The final object's fields after `message`: `done`, `done_reason`, the
/// token counts and (made-up) durations.
fn finish(r: &Resolved, message: Value) -> Value {
    json!({
        "model": r.model,
        "created_at": rfc3339(r.created_nanos),
        "message": message,
        "done": true,
        "done_reason": "stop",
        "total_duration": 1_000_000u64,
        "load_duration": 100_000u64,
        "prompt_eval_count": r.input_tokens,
        "prompt_eval_duration": 400_000u64,
        "eval_count": r.output_tokens,
        "eval_duration": 500_000u64,
    })
}

/// One object with `done: true`, the whole text and any `tool_calls`.
/// Ollama has no call ids; arguments are a JSON value (a JSON string when
/// the raw text is not valid JSON).
pub(super) fn body(r: &Resolved) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": r.text.as_deref().unwrap_or(""),
    });
    if !r.calls.is_empty() {
        message["tool_calls"] = tool_calls(r);
    }
    finish(r, message)
}

/// NDJSON lines: the text in several `done: false` pieces, then one
/// `done: false` line with empty content and all `tool_calls`, then the
/// final `done: true` line with empty content and the token counts.
pub(super) fn events(r: &Resolved) -> Vec<Bytes> {
    let line = |message: Value| {
        let v = json!({
            "model": r.model,
            "created_at": rfc3339(r.created_nanos),
            "message": message,
            "done": false,
        });
        Bytes::from(format!("{v}\n"))
    };
    let mut out = Vec::new();
    if let Some(text) = &r.text {
        for piece in text_pieces(text) {
            out.push(line(json!({"role": "assistant", "content": piece})));
        }
    }
    if !r.calls.is_empty() {
        out.push(line(json!({
            "role": "assistant",
            "content": "",
            "tool_calls": tool_calls(r),
        })));
    }
    let last = finish(r, json!({"role": "assistant", "content": ""}));
    out.push(Bytes::from(format!("{last}\n")));
    out
}

/// `{"error": message}`.
pub(super) fn error(message: &str) -> Value {
    json!({ "error": message })
}
