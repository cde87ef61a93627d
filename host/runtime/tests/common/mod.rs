//! Shared by the loop's suites: scripted model responses and an observer
//! that keeps every event.

#![allow(dead_code)]

use kaizen_llm::{Block, Response, StopReason, Usage};
use kaizen_runtime::{Event, Observer};
use std::sync::Mutex;

/// A model response with `text` and then `calls` (id, tool, JSON
/// arguments), 100 input and 10 output tokens, from `scripted-model`.
pub fn response(text: &str, calls: Vec<(String, String, String)>) -> Response {
    let stop_reason = if calls.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    };
    let mut content = vec![Block::Text { text: text.into() }];
    content.extend(
        calls
            .into_iter()
            .map(|(id, name, arguments)| Block::ToolUse {
                id,
                name,
                arguments,
            }),
    );
    Response {
        content,
        usage: Usage {
            input_tokens: 100,
            output_tokens: 10,
            ..Usage::default()
        },
        stop_reason,
        model: "scripted-model".into(),
    }
}

/// A response with `text` and then `calls` (tool, arguments), their ids
/// `call_<i>_<tool>`.
pub fn reply(text: &str, calls: &[(&str, &str)]) -> Response {
    let calls = calls.iter().enumerate();
    response(
        text,
        calls
            .map(|(i, (name, args))| {
                (
                    format!("call_{i}_{name}"),
                    name.to_string(),
                    args.to_string(),
                )
            })
            .collect(),
    )
}

/// Keeps every event it is told.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<Event>>);

impl Observer for Recorder {
    fn on_event(&self, event: &Event) {
        self.0.lock().unwrap().push(event.clone());
    }
}
