//! OpenAI Responses (`POST /v1/responses`), as Codex CLI speaks it.

use super::{Call, Resolved, argument_fragments, sse_named, text_pieces};
use bytes::Bytes;
use serde_json::{Value, json};

fn id(r: &Resolved) -> String {
    format!("resp_scripted{:04}", r.seq)
}

fn message_id(r: &Resolved) -> String {
    format!("msg_scripted{:04}", r.seq)
}

/// A function call item's own id (`fc_…`), distinct from its `call_id`,
/// which is the scripted call id that tool outputs refer to.
fn call_item_id(r: &Resolved, slot: usize) -> String {
    format!("fc_scripted{:04}_{slot}", r.seq)
}

fn usage(r: &Resolved) -> Value {
    json!({
        "input_tokens": r.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": r.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": r.input_tokens + r.output_tokens,
    })
}

fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

fn message_item(r: &Resolved, status: &str, content: Vec<Value>) -> Value {
    json!({
        "id": message_id(r),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    })
}

fn call_item(r: &Resolved, slot: usize, call: &Call, arguments: &str, status: &str) -> Value {
    json!({
        "type": "function_call",
        "id": call_item_id(r, slot),
        "call_id": call.id,
        "name": call.name,
        "arguments": arguments,
        "status": status,
    })
}

/// The completed output items: a message first when the reply has text,
/// then one `function_call` per call, its raw arguments as-is (malformed
/// or not: they are text on this wire).
fn output(r: &Resolved) -> Vec<Value> {
    let message = r
        .text
        .as_deref()
        .map(|text| message_item(r, "completed", vec![output_text(text)]));
    let calls = r
        .calls
        .iter()
        .enumerate()
        .map(|(slot, call)| call_item(r, slot, call, &call.arguments, "completed"));
    message.into_iter().chain(calls).collect()
}

/// The `response` object with this status and output.
fn response(r: &Resolved, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": id(r),
        "object": "response",
        "created_at": r.created(),
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": r.model,
        "output": output,
        "parallel_tool_calls": true,
        "usage": usage,
    })
}

/// The completed `response` object.
pub(super) fn body(r: &Resolved) -> Value {
    response(r, "completed", output(r), usage(r))
}

/// SSE events being built: each gets its `type` and the next
/// `sequence_number`.
struct Events {
    out: Vec<Bytes>,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.out.len());
        self.out.push(sse_named(kind, &data));
    }
}

/// The SSE events: `response.created` and `response.in_progress` (status
/// `in_progress`, no output, no usage); per output item
/// `response.output_item.added` ... `response.output_item.done` with,
/// for the message, a content part whose text goes out in several
/// `response.output_text.delta`s, and for a call up to three
/// `response.function_call_arguments.delta`s; then `response.completed`
/// with the whole response and its usage.
pub(super) fn events(r: &Resolved) -> Vec<Bytes> {
    let mut ev = Events { out: Vec::new() };
    let started = response(r, "in_progress", Vec::new(), Value::Null);
    ev.push("response.created", json!({"response": started}));
    ev.push("response.in_progress", json!({"response": started}));
    let mut index = 0;
    if let Some(text) = &r.text {
        let item_id = message_id(r);
        let at = json!({"item_id": item_id, "output_index": index, "content_index": 0});
        let with = |mut v: Value, key: &str, value: Value| {
            v[key] = value;
            v
        };
        ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": message_item(r, "in_progress", Vec::new())}),
        );
        ev.push(
            "response.content_part.added",
            with(at.clone(), "part", output_text("")),
        );
        for piece in text_pieces(text) {
            ev.push(
                "response.output_text.delta",
                with(at.clone(), "delta", json!(piece)),
            );
        }
        ev.push(
            "response.output_text.done",
            with(at.clone(), "text", json!(text)),
        );
        ev.push(
            "response.content_part.done",
            with(at, "part", output_text(text)),
        );
        ev.push(
            "response.output_item.done",
            json!({"output_index": index, "item": message_item(r, "completed", vec![output_text(text)])}),
        );
        index += 1;
    }
    for (slot, call) in r.calls.iter().enumerate() {
        let item_id = call_item_id(r, slot);
        ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": call_item(r, slot, call, "", "in_progress")}),
        );
        for fragment in argument_fragments(&call.arguments) {
            ev.push(
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": fragment}),
            );
        }
        ev.push(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "arguments": call.arguments}),
        );
        ev.push(
            "response.output_item.done",
            json!({"output_index": index, "item": call_item(r, slot, call, &call.arguments, "completed")}),
        );
        index += 1;
    }
    ev.push("response.completed", json!({"response": body(r)}));
    ev.out
}
