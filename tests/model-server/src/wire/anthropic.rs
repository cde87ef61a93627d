//! Anthropic Messages (`POST /v1/messages`).

use super::{Resolved, argument_fragments, arguments_value, sse_named, text_pieces};
use bytes::Bytes;
use serde_json::{Value, json};

fn id(r: &Resolved) -> String {
    format!("msg_scripted{:04}", r.seq)
}

fn stop_reason(r: &Resolved) -> &'static str {
    if r.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn usage(input: u64, output: u64) -> Value {
    json!({
        "input_tokens": input,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output,
    })
}

/// The `message` object. A text block comes first when the reply has text,
/// then one `tool_use` block per call. Arguments that are not valid JSON
/// cannot be an `input` object: they are sent as a JSON string value.
pub(super) fn body(r: &Resolved) -> Value {
    let mut content = Vec::new();
    if let Some(text) = &r.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in &r.calls {
        content.push(json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": arguments_value(&call.arguments),
        }));
    }
    json!({
        "id": id(r),
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": content,
        "stop_reason": stop_reason(r),
        "stop_sequence": null,
        "usage": usage(r.input_tokens, r.output_tokens),
    })
}

/// The SSE events: `message_start` (usage with the input tokens and at most
/// one output token, as Anthropic does), per content block
/// `content_block_start` / `content_block_delta`s / `content_block_stop`
/// (with a `ping` after the first block's start, or after `message_start`
/// when there is no block), `message_delta` (stop reason, cumulative output
/// tokens) and `message_stop`.
///
/// Text goes out in several `text_delta`s. A tool call's block starts with
/// `input: {}`, then an empty `input_json_delta` and up to three
/// `partial_json` fragments of the raw arguments, malformed or not.
pub(super) fn events(r: &Resolved) -> Vec<Bytes> {
    let mut out = vec![sse_named(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": id(r),
                "type": "message",
                "role": "assistant",
                "model": r.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage(r.input_tokens, r.output_tokens.min(1)),
            },
        }),
    )];
    let ping = || sse_named("ping", &json!({"type": "ping"}));
    let delta = |index: usize, delta: Value| {
        sse_named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    };
    let start = |index: usize, block: Value| {
        sse_named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    };
    let stop = |index: usize| {
        sse_named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    };

    let mut index = 0;
    if let Some(text) = &r.text {
        out.push(start(index, json!({"type": "text", "text": ""})));
        out.push(ping());
        for piece in text_pieces(text) {
            out.push(delta(index, json!({"type": "text_delta", "text": piece})));
        }
        out.push(stop(index));
        index += 1;
    }
    for call in &r.calls {
        out.push(start(
            index,
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
        ));
        if index == 0 {
            out.push(ping());
        }
        out.push(delta(
            index,
            json!({"type": "input_json_delta", "partial_json": ""}),
        ));
        for fragment in argument_fragments(&call.arguments) {
            out.push(delta(
                index,
                json!({"type": "input_json_delta", "partial_json": fragment}),
            ));
        }
        out.push(stop(index));
        index += 1;
    }
    if index == 0 {
        out.push(ping());
    }
    out.push(sse_named(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(r), "stop_sequence": null},
            "usage": {"output_tokens": r.output_tokens},
        }),
    ));
    out.push(sse_named("message_stop", &json!({"type": "message_stop"})));
    out
}

/// `{"type": "error", "error": {"type", "message"}}` with Anthropic's error
/// types for the common statuses.
pub(super) fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
