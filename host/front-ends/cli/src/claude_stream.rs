//! `--output-format stream-json`: a run told as Claude Code's message
//! stream, the one its Agent SDKs parse. Each of Kaizen's events becomes
//! the message Claude Code would print for it:
//!
//! - the run's start: `{"type": "system", "subtype": "init", …}` with the
//!   tools, model, permission mode, MCP servers, slash commands, skills
//!   and agents;
//! - the model's text and each tool call: an `assistant` message with a
//!   `text` or `tool_use` block (one message id per model call, as Claude
//!   Code splits a response into one message per block);
//! - each tool's result: a `user` message with a `tool_result` block;
//! - a sub-agent's messages: the same, with `parent_tool_use_id` set to
//!   the `Task` call that started it;
//! - a compaction: `{"type": "system", "subtype": "compact_boundary"}`;
//! - streamed text, with `--include-partial-messages`: `stream_event`s;
//! - the end: `{"type": "result", "subtype": "success" | "error_…"}` with
//!   the usage, cost and `permission_denials`;
//! - what Claude Code has no message for (retries, hooks, planners,
//!   notices, approvals asked): a `system` message whose subtype is
//!   `kaizen_` and the event's type, carrying the event's fields.

use kaizen_protocol::{Event, RunResult, Status};
use serde_json::{Value, json};
use std::sync::Mutex;

/// What the init message says beyond the event: known to the front end,
/// not to the loop.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// The permission mode the run starts in (Claude Code's name).
    pub permission_mode: String,
    /// The session's slash commands, skills and agent types, by name.
    pub slash_commands: Vec<String>,
    /// The skills among them.
    pub skills: Vec<String>,
    /// The agent types `Task` can start.
    pub agents: Vec<String>,
}

/// Turns events into Claude Code's messages.
pub struct ClaudeStream {
    /// `--include-partial-messages`: text deltas as `stream_event`s.
    partial: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    session: Session,
    session_id: String,
    /// The model call whose blocks are being told (for message ids).
    cycle: u32,
    /// Whether the current model call's streamed text began.
    streaming: bool,
    /// The model that made the last response, by the `Task` call whose
    /// sub-agent it answered ("" for the session's own): its tool calls
    /// are that response's blocks.
    models: std::collections::HashMap<String, String>,
}

impl ClaudeStream {
    /// A stream; `partial` sends streamed text too.
    pub fn new(partial: bool) -> Self {
        Self {
            partial,
            state: Mutex::default(),
        }
    }

    /// What the init message says of the session (set before the run).
    pub fn set_session(&self, session: Session) {
        self.lock().session = session;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The messages `event` becomes (none for an event Claude Code does
    /// not show, such as streamed text without `partial`).
    pub fn messages(&self, event: &Event) -> Vec<Value> {
        let mut state = self.lock();
        self.translate(&mut state, event, None)
    }

    fn translate(&self, state: &mut State, event: &Event, parent: Option<&str>) -> Vec<Value> {
        let message = match event {
            // A sub-agent's start and end are not the session's: they
            // fall to the `kaizen_*` messages below, under their call.
            Event::SessionStart {
                session_id,
                model,
                cwd,
                tools,
            } if parent.is_none() => {
                state.session_id = session_id.clone();
                init(state, session_id, model, cwd, tools)
            }
            Event::TextDelta { text } => {
                if !self.partial {
                    return Vec::new();
                }
                let mut out = Vec::new();
                if !state.streaming && parent.is_none() {
                    state.streaming = true;
                    out.push(stream_event(
                        state,
                        parent,
                        json!({"type": "content_block_start", "index": 0,
                               "content_block": {"type": "text", "text": ""}}),
                    ));
                }
                out.push(stream_event(
                    state,
                    parent,
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": text}}),
                ));
                return out;
            }
            Event::Assistant { cycle, model, text } => {
                let mut out = Vec::new();
                if parent.is_none() {
                    state.cycle = *cycle;
                    if std::mem::take(&mut state.streaming) {
                        out.push(stream_event(
                            state,
                            parent,
                            json!({"type": "content_block_stop", "index": 0}),
                        ));
                    }
                }
                state
                    .models
                    .insert(parent.unwrap_or_default().to_string(), model.clone());
                if !text.is_empty() {
                    out.push(assistant(
                        state,
                        parent,
                        model,
                        json!({"type": "text", "text": text}),
                    ));
                }
                return out;
            }
            Event::ToolCall {
                id,
                name,
                arguments,
            } => {
                let model = state
                    .models
                    .get(parent.unwrap_or_default())
                    .cloned()
                    .unwrap_or_default();
                assistant(
                    state,
                    parent,
                    &model,
                    json!({"type": "tool_use", "id": id, "name": name, "input": arguments}),
                )
            }
            Event::ToolResult {
                id, status, output, ..
            } => user(
                state,
                parent,
                json!({"type": "tool_result", "tool_use_id": id, "content": output,
                       "is_error": status != "success"}),
            ),
            Event::SubAgent { call_id, event } => {
                return self.translate(state, event, Some(call_id));
            }
            Event::Compaction {
                trigger,
                tokens_before,
                ..
            } => {
                let mut message = system(state, event, Some("compact_boundary"));
                message["compact_metadata"] =
                    json!({"trigger": trigger, "pre_tokens": tokens_before});
                message
            }
            Event::Result(result) if parent.is_none() => return vec![result_message(result)],
            other => system(state, other, None),
        };
        let mut message = message;
        if let Some(parent) = parent {
            message["parent_tool_use_id"] = json!(parent);
        }
        vec![message]
    }
}

/// The `result` message that ends a run.
pub fn result_message(result: &RunResult) -> Value {
    let subtype = match result.status {
        Status::Complete => "success",
        Status::MaxCycles => "error_max_turns",
        Status::BudgetExceeded => "error_max_budget_usd",
        _ => "error_during_execution",
    };
    let is_error = result.status != Status::Complete;
    let mut message = json!({
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": result.duration_ms,
        // Kaizen does not time the provider apart from the rest.
        "duration_api_ms": result.duration_ms,
        "num_turns": result.cycles_used,
        "result": result.output,
        "session_id": result.session_id,
        "total_cost_usd": result.cost_usd,
        "usage": {
            "input_tokens": result.tokens_used.input,
            "output_tokens": result.tokens_used.output,
        },
        "permission_denials": result.permission_denials,
        // The model's own reason, when it ended the run by answering.
        "stop_reason": (result.status == Status::Complete).then_some("end_turn"),
        "uuid": uuid(),
        "kaizen_status": result.status.as_str(),
    });
    message["modelUsage"][&result.model_used] = json!({
        "inputTokens": result.tokens_used.input,
        "outputTokens": result.tokens_used.output,
        "costUSD": result.cost_usd,
    });
    if let Some(error) = &result.error_message {
        message["errors"] = json!([error]);
    }
    message
}

fn init(state: &State, session_id: &str, model: &str, cwd: &str, tools: &[String]) -> Value {
    // An MCP server is connected when its tools are on offer: Kaizen
    // names them `mcp__<server>__<tool>`, as Claude Code does.
    let mut servers: Vec<&str> = Vec::new();
    for tool in tools {
        if let Some(server) = tool
            .strip_prefix("mcp__")
            .and_then(|t| t.split("__").next())
            && !servers.contains(&server)
        {
            servers.push(server);
        }
    }
    let session = &state.session;
    json!({
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": session_id,
        "tools": tools,
        "mcp_servers": servers
            .iter()
            .map(|name| json!({"name": name, "status": "connected"}))
            .collect::<Vec<_>>(),
        "model": model,
        "permissionMode": session.permission_mode,
        "slash_commands": session.slash_commands,
        "skills": session.skills,
        "agents": session.agents,
        "apiKeySource": "none",
        "output_style": "default",
        "plugins": [],
        "kaizen_version": env!("CARGO_PKG_VERSION"),
        "runtime": kaizen_protocol::RUNTIME_NAME,
        "uuid": uuid(),
    })
}

fn assistant(state: &State, parent: Option<&str>, model: &str, block: Value) -> Value {
    json!({
        "type": "assistant",
        "message": {
            "id": format!("msg_{}_{}", state.session_id, state.cycle),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": null,
        },
        "parent_tool_use_id": parent,
        "session_id": state.session_id,
        "uuid": uuid(),
    })
}

fn user(state: &State, parent: Option<&str>, block: Value) -> Value {
    json!({
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": parent,
        "session_id": state.session_id,
        "uuid": uuid(),
    })
}

fn stream_event(state: &State, parent: Option<&str>, event: Value) -> Value {
    json!({
        "type": "stream_event",
        "event": event,
        "parent_tool_use_id": parent,
        "session_id": state.session_id,
        "uuid": uuid(),
    })
}

/// A `system` message carrying `event`'s own fields, of `subtype`, or
/// else `kaizen_` and the event's type as Kaizen's own stream names it.
fn system(state: &State, event: &Event, subtype: Option<&str>) -> Value {
    let mut message = match serde_json::to_value(event) {
        Ok(Value::Object(fields)) => Value::Object(fields),
        _ => json!({}),
    };
    let kind = message["type"].as_str().unwrap_or("event").to_string();
    message["subtype"] = json!(subtype.map_or_else(|| format!("kaizen_{kind}"), str::to_string));
    message["kaizen_type"] = json!(kind);
    message["type"] = json!("system");
    message["session_id"] = json!(state.session_id);
    message["uuid"] = json!(uuid());
    message
}

/// A warning about the run (the sandbox degraded, say), as a system
/// message.
pub fn warning(message: &str) -> Value {
    json!({"type": "system", "subtype": "kaizen_warning", "message": message, "uuid": uuid()})
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_protocol::{PermissionDenial, TokensUsed};

    fn start() -> Event {
        Event::SessionStart {
            session_id: "s1".into(),
            model: "gpt-4o".into(),
            cwd: "/w".into(),
            tools: vec![
                "Read".into(),
                "mcp__files__list".into(),
                "mcp__files__get".into(),
            ],
        }
    }

    #[test]
    fn a_run_reads_as_claude_code_tells_it() {
        let stream = ClaudeStream::new(false);
        stream.set_session(Session {
            permission_mode: "default".into(),
            ..Session::default()
        });
        let init = &stream.messages(&start())[0];
        assert_eq!(init["subtype"], "init");
        assert_eq!(init["permissionMode"], "default");
        assert_eq!(
            init["mcp_servers"],
            json!([{"name": "files", "status": "connected"}])
        );
        assert!(
            stream
                .messages(&Event::TextDelta { text: "x".into() })
                .is_empty()
        );
        let text = &stream.messages(&Event::Assistant {
            cycle: 1,
            model: "gpt-4o".into(),
            text: "Reading.".into(),
        })[0];
        assert_eq!(
            text["message"]["content"][0],
            json!({"type": "text", "text": "Reading."})
        );
        assert_eq!(text["message"]["id"], "msg_s1_1");
        let call = &stream.messages(&Event::ToolCall {
            id: "c1".into(),
            name: "Read".into(),
            arguments: json!({"file_path": "/w/a"}),
        })[0];
        assert_eq!(call["type"], "assistant");
        assert_eq!(call["message"]["content"][0]["type"], "tool_use");
        assert_eq!(call["message"]["id"], "msg_s1_1");
        assert_eq!(call["message"]["model"], "gpt-4o");
        let result = &stream.messages(&Event::SubAgent {
            call_id: "t1".into(),
            event: Box::new(Event::ToolResult {
                id: "c2".into(),
                name: "Read".into(),
                status: "error".into(),
                duration_ms: 1,
                output: "no such file".into(),
            }),
        })[0];
        assert_eq!(result["type"], "user");
        assert_eq!(result["parent_tool_use_id"], "t1");
        assert_eq!(result["message"]["content"][0]["is_error"], true);
        let retry = &stream.messages(&Event::Retry {
            attempt: 2,
            error: "503".into(),
        })[0];
        assert_eq!(retry["type"], "system");
        assert_eq!(retry["subtype"], "kaizen_retry");
        assert_eq!(retry["attempt"], 2);
    }

    /// A sub-agent's start and end are told under its call, never as the
    /// session's own `init` or `result` (which ends a turn for the SDKs).
    #[test]
    fn a_sub_agents_start_and_end_stay_under_its_call() {
        let stream = ClaudeStream::new(false);
        stream.messages(&start());
        let nested = |event: Event| {
            stream.messages(&Event::SubAgent {
                call_id: "t1".into(),
                event: Box::new(event),
            })
        };
        let begun = &nested(start())[0];
        assert_eq!(begun["subtype"], "kaizen_session_start");
        assert_eq!(begun["parent_tool_use_id"], "t1");
        let ended = &nested(Event::Result(sample_result()))[0];
        assert_eq!(ended["type"], "system");
        assert_eq!(ended["subtype"], "kaizen_result");
        assert_eq!(ended["parent_tool_use_id"], "t1");
    }

    fn sample_result() -> RunResult {
        RunResult {
            output: "done".into(),
            status: Status::Complete,
            cycles_used: 1,
            tokens_used: TokensUsed::default(),
            cost_usd: 0.0,
            duration_ms: 1,
            session_id: "s1/t1".into(),
            model_used: "gpt-4o".into(),
            runtime_name: "kaizen".into(),
            tool_calls: Vec::new(),
            error_message: None,
            permission_denials: Vec::new(),
            compactions: 0,
            cost_estimated: false,
            runtime_selection: None,
        }
    }

    #[test]
    fn streamed_text_opens_and_closes_its_block() {
        let stream = ClaudeStream::new(true);
        stream.messages(&start());
        let first = stream.messages(&Event::TextDelta { text: "He".into() });
        assert_eq!(first.len(), 2);
        assert_eq!(first[0]["event"]["type"], "content_block_start");
        assert_eq!(first[1]["event"]["delta"]["text"], "He");
        let more = stream.messages(&Event::TextDelta { text: "llo".into() });
        assert_eq!(more.len(), 1);
        let end = stream.messages(&Event::Assistant {
            cycle: 1,
            model: "m".into(),
            text: "Hello".into(),
        });
        assert_eq!(end[0]["event"]["type"], "content_block_stop");
        assert_eq!(end[1]["type"], "assistant");
    }

    #[test]
    fn results_carry_claude_codes_subtypes() {
        let mut result = RunResult {
            cycles_used: 2,
            tokens_used: TokensUsed {
                input: 10,
                output: 5,
                total: 15,
            },
            cost_usd: 0.01,
            duration_ms: 40,
            session_id: "s1".into(),
            permission_denials: vec![PermissionDenial {
                tool_name: "Bash".into(),
                tool_use_id: "c1".into(),
                tool_input: json!({"command": "rm -rf /"}),
            }],
            ..sample_result()
        };
        let message = result_message(&result);
        assert_eq!(message["subtype"], "success");
        assert_eq!(message["is_error"], false);
        assert_eq!(message["num_turns"], 2);
        assert_eq!(message["permission_denials"][0]["tool_name"], "Bash");
        result.status = Status::MaxCycles;
        assert_eq!(result_message(&result)["subtype"], "error_max_turns");
        result.status = Status::Interrupted;
        result.error_message = Some("interrupted".into());
        let message = result_message(&result);
        assert_eq!(message["subtype"], "error_during_execution");
        assert_eq!(message["errors"], json!(["interrupted"]));
    }
}
