//! Shared by the loop's suites: scripted model responses and an observer
//! that keeps every event.

#![allow(dead_code)]

use kaizen_llm::{
    Block, CompletionFuture, EventSink, Provider, Request, Response, Role, StopReason, Usage,
};
use kaizen_protocol::{Event, Observer};
use kaizen_tools::{
    CallContext, SubAgentRequest, Tool, ToolError, ToolErrorKind, ToolFuture, ToolOutput, ToolSpec,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

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

/// Answers each conversation from its own queue, keyed by the text of its
/// first user message; keeps every request. The conversation `hang_on` is
/// never answered; `hanging` is notified when it asks.
#[derive(Default)]
pub struct Routed {
    pub queues: Mutex<HashMap<String, Vec<Response>>>,
    pub requests: Mutex<Vec<Request>>,
    pub hang_on: Option<String>,
    pub hanging: Arc<Notify>,
}

impl Routed {
    pub fn with(mut self, task: &str, mut replies: Vec<Response>) -> Self {
        replies.reverse();
        self.queues.get_mut().unwrap().insert(task.into(), replies);
        self
    }

    /// The requests of the conversation that began with `task`.
    pub fn requests_of(&self, task: &str) -> Vec<Request> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| first_user_text(r) == task)
            .cloned()
            .collect()
    }
}

pub fn first_user_text(request: &Request) -> String {
    request
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| match m.content.first() {
            Some(Block::Text { text }) => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

impl Provider for Routed {
    fn name(&self) -> &str {
        "routed"
    }

    fn complete<'a>(&'a self, request: &'a Request, _: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(request.clone());
            let task = first_user_text(request);
            if self.hang_on.as_deref() == Some(task.as_str()) {
                self.hanging.notify_one();
                std::future::pending::<()>().await;
            }
            let next = self
                .queues
                .lock()
                .unwrap()
                .get_mut(&task)
                .and_then(Vec::pop);
            Ok(next.unwrap_or_else(|| reply(&format!("script exhausted for {task}"), &[])))
        })
    }
}

/// [`reply`] with the arguments as JSON values.
pub fn reply_json(text: &str, calls: &[(&str, serde_json::Value)]) -> Response {
    let args: Vec<String> = calls.iter().map(|(_, args)| args.to_string()).collect();
    let calls: Vec<(&str, &str)> = calls
        .iter()
        .zip(&args)
        .map(|((name, _), args)| (*name, args.as_str()))
        .collect();
    reply(text, &calls)
}

/// Starts a sub-agent through the call's link, as the `Task` plugin does
/// through the `agent` import.
pub struct TaskTool(pub ToolSpec);

impl Tool for TaskTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn source(&self) -> &str {
        "test"
    }
    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let request = SubAgentRequest {
                description: input["description"].as_str().unwrap_or_default().into(),
                prompt: input["prompt"].as_str().unwrap_or_default().into(),
                subagent_type: input["subagent_type"].as_str().unwrap_or_default().into(),
            };
            let report = ctx
                .sub_agents
                .run(&ctx.call_id, request)
                .await
                .map_err(|err| ToolError::new(ToolErrorKind::InvalidInput, err))?;
            Ok(ToolOutput::text(format!(
                "{} [{}, {} cycles, {} tools, ${}]",
                report.output, report.status, report.cycles, report.tool_calls, report.cost_usd
            )))
        })
    }
}
