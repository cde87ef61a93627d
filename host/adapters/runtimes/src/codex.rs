//! Codex CLI (`codex exec --json`).
//!
//! Its lines: `thread.started` (the thread id), `turn.started`,
//! `item.started`/`item.updated`/`item.completed` for each item of the turn
//! (`agent_message`, `reasoning`, `command_execution`, `file_change`,
//! `mcp_tool_call`, `web_search`, `todo_list`), and `turn.completed` with the
//! turn's usage, or `turn.failed`; `error` lines report trouble it works
//! around (reconnecting). A command execution is reported as a call of
//! `shell`, with the command line it ran. It reports no cost, and no model calls: the first
//! action after tool results counts as the next call.

use crate::adapter::ExecutionContext;
use crate::capabilities::{CostReporting, Vendor};
use crate::external::{Cli, CliInfo, Invocation};
use crate::normalize::{CycleCounter, RunSoFar, StreamParser, count, text};
use kaizen_protocol::{Event, PermissionMode, Status};
use serde_json::{Value, json};
use std::path::Path;

/// The provider Codex is given when `OPENAI_BASE_URL` points elsewhere.
const PROVIDER: &str = "kaizen-openai";

/// Codex CLI.
pub(crate) struct Codex;

const INFO: CliInfo = CliInfo {
    name: "codex",
    program: "codex",
    package: "@openai/codex",
    vendor: Vendor::Openai,
    default_model: "gpt-5",
    tools: &[
        "exec_command",
        "write_stdin",
        "view_image",
        "web_search",
        "request_user_input",
    ],
    sandbox: "Landlock and seccomp (read-only, workspace-write)",
    cost: CostReporting::Estimated,
    max_context_tokens: 272_000,
    env_vars: &[
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "OPENAI_BASE_URL",
        "CODEX_HOME",
    ],
};

impl Cli for Codex {
    fn info(&self) -> &'static CliInfo {
        &INFO
    }

    fn invocation(
        &self,
        context: &ExecutionContext,
        model: &str,
        _scratch: &Path,
    ) -> Result<Invocation, String> {
        let mut notes = Vec::new();
        let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check", "-m", model]
            .map(String::from)
            .to_vec();
        args.extend(["-C".to_string(), context.workspace.display().to_string()]);
        match context.permission_mode {
            PermissionMode::Plan => args.extend(["--sandbox".into(), "read-only".into()]),
            PermissionMode::BypassPermissions => {
                args.push("--dangerously-bypass-approvals-and-sandbox".to_string());
            }
            PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::DontAsk => {
                args.extend(["--sandbox".into(), "workspace-write".into()]);
            }
        }
        let mut config = Vec::new();
        if let Some(base_url) = context.env.get("OPENAI_BASE_URL") {
            // Codex's built-in provider ignores the variable: a provider of
            // its own, on the Responses wire (the only one Codex speaks).
            config.push(format!("model_provider={}", toml_string(PROVIDER)));
            config.push(format!(
                "model_providers.{PROVIDER}={{name={},base_url={},env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}}",
                toml_string("OpenAI (OPENAI_BASE_URL)"),
                toml_string(base_url),
            ));
        }
        if let Some(instructions) = &context.instructions {
            config.push(format!(
                "developer_instructions={}",
                toml_string(instructions)
            ));
        }
        for server in &context.mcp_servers {
            let args: Vec<String> = server.args.iter().map(|a| toml_string(a)).collect();
            let env: Vec<String> = server
                .env
                .iter()
                .map(|(k, v)| format!("{}={}", toml_string(k), toml_string(v)))
                .collect();
            config.push(format!(
                "mcp_servers.{}={{command={},args=[{}],env={{{}}}}}",
                toml_string(&server.name),
                toml_string(&server.command),
                args.join(","),
                env.join(",")
            ));
        }
        for entry in config {
            args.extend(["-c".to_string(), entry]);
        }
        if !context.allowed_tools.is_empty() || !context.disallowed_tools.is_empty() {
            notes.push(
                "codex has no per-tool rules: --allowedTools and --disallowedTools are not applied; its sandbox mode is"
                    .to_string(),
            );
        }
        if let Some(resume) = &context.resume {
            args.extend(["resume".to_string(), resume.session.clone()]);
        }
        args.extend(["--".to_string(), context.task.clone()]);
        Ok(Invocation {
            args,
            notes,
            ..Invocation::default()
        })
    }

    fn parser(&self, context: &ExecutionContext) -> Box<dyn StreamParser> {
        let (input, output) = context.resume.as_ref().map_or((0, 0), |r| r.tokens);
        Box::new(Parser {
            before: (input, output),
            ..Parser::default()
        })
    }
}

/// A TOML basic string (JSON's escapes are TOML's).
fn toml_string(text: &str) -> String {
    json!(text).to_string()
}

/// Reads Codex's stream.
#[derive(Default)]
struct Parser {
    cycles: CycleCounter,
    /// The input and output tokens of the thread's earlier runs: Codex
    /// reports the thread's running totals.
    before: (u64, u64),
}

/// The item types that are tool calls.
fn is_tool(item: &Value) -> bool {
    matches!(
        item["type"].as_str(),
        Some("command_execution" | "file_change" | "mcp_tool_call" | "web_search")
    )
}

/// A tool item's name and arguments, as Kaizen reports them.
fn call_of(item: &Value) -> (String, Value) {
    match item["type"].as_str().unwrap_or_default() {
        "command_execution" => ("shell".into(), json!({"command": item["command"]})),
        "file_change" => ("apply_patch".into(), json!({"changes": item["changes"]})),
        "mcp_tool_call" => (
            format!("mcp__{}__{}", text(item, "server"), text(item, "tool")),
            item["arguments"].clone(),
        ),
        other => (other.to_string(), json!({"query": item["query"]})),
    }
}

impl StreamParser for Parser {
    fn line(&mut self, line: &Value, run: &mut RunSoFar, emit: &mut dyn FnMut(Event)) {
        let item = &line["item"];
        match line["type"].as_str().unwrap_or_default() {
            "thread.started" => {
                run.session_id = text(line, "thread_id");
                emit(Event::SessionStart {
                    session_id: run.session_id.clone(),
                    model: run.model.clone(),
                    cwd: run.cwd.clone(),
                    tools: INFO.tools.iter().map(|t| t.to_string()).collect(),
                });
            }
            "item.started" if is_tool(item) => {
                self.cycles.model_acted(run);
                let (name, arguments) = call_of(item);
                run.call_started(&text(item, "id"), &name, arguments, emit);
            }
            "item.completed" if is_tool(item) => {
                let id = text(item, "id");
                if !run.tool_calls.iter().any(|call| call.id == id) {
                    self.cycles.model_acted(run);
                    let (name, arguments) = call_of(item);
                    run.call_started(&id, &name, arguments, emit);
                }
                let failed = item["status"] == "failed"
                    || item["exit_code"].as_i64().is_some_and(|code| code != 0);
                let output = match item["aggregated_output"].as_str() {
                    Some(output) => output.to_string(),
                    None => item["result"].to_string(),
                };
                run.call_ended(&id, failed, &output, emit);
                self.cycles.results_came();
            }
            "item.completed" if item["type"] == "agent_message" => {
                self.cycles.model_acted(run);
                run.said(item["text"].as_str().unwrap_or_default(), emit);
            }
            // Codex's warnings come as items of their own.
            "item.completed" if item["type"] == "error" => emit(Event::Notice {
                source: "codex".to_string(),
                text: text(item, "message"),
            }),
            "turn.completed" => {
                let input = count(line, "/usage/input_tokens").saturating_sub(self.before.0);
                let cached = count(line, "/usage/cached_input_tokens").min(input);
                run.usage.input_tokens = input - cached;
                run.usage.cache_read_tokens = cached;
                run.usage.output_tokens =
                    count(line, "/usage/output_tokens").saturating_sub(self.before.1);
                run.ended = Some((Status::Complete, None));
            }
            "turn.failed" => {
                let message = line["error"]["message"]
                    .as_str()
                    .unwrap_or("the turn failed");
                run.ended = Some((Status::Error, Some(message.to_string())));
            }
            // Passing trouble (it reconnects); `turn.failed` ends the run.
            "error" => emit(Event::Notice {
                source: "codex".to_string(),
                text: text(line, "message"),
            }),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::{kinds, replay};

    #[test]
    fn a_run_reads_as_kaizens_events_and_result() {
        let (run, events) = replay(
            &mut Parser::default(),
            include_str!("../tests/fixtures/codex.jsonl"),
        );
        assert_eq!(run.session_id, "01a21861-283b-7882-8833-5f10a68463b3");
        assert_eq!(run.cycles, 2);
        assert_eq!(run.output, "All done.");
        assert_eq!((run.usage.input_tokens, run.usage.output_tokens), (250, 25));
        assert_eq!(run.ended, Some((Status::Complete, None)));
        let call = &run.tool_calls[0];
        assert_eq!(
            (call.name.as_str(), call.status.as_str()),
            ("shell", "success")
        );
        assert!(
            call.arguments["command"]
                .as_str()
                .unwrap()
                .contains("proof.txt")
        );
        assert_eq!(
            kinds(&events),
            [
                "session_start",
                "notice",
                "tool_call",
                "tool_result",
                "text_delta",
                "assistant"
            ]
        );
    }

    #[test]
    fn a_failed_turn_is_an_error_and_reconnects_are_notices() {
        let (run, events) = replay(
            &mut Parser::default(),
            include_str!("../tests/fixtures/codex-failed.jsonl"),
        );
        let (status, message) = run.ended.unwrap();
        assert_eq!(status, Status::Error);
        assert!(message.unwrap().contains("high demand"));
        assert_eq!(run.cycles, 0);
        assert_eq!(kinds(&events).iter().filter(|k| *k == "notice").count(), 7);
    }

    #[test]
    fn the_command_is_mapped_from_the_permission_mode_and_base_url() {
        let mut context = ExecutionContext::new("a -task", "/w");
        context.env = [("OPENAI_BASE_URL".to_string(), "http://h:1/v1".to_string())].into();
        context.permission_mode = PermissionMode::Plan;
        let args = Codex
            .invocation(&context, "gpt-5", Path::new("/s"))
            .unwrap()
            .args;
        let line = args.join(" ");
        assert!(line.contains("--sandbox read-only"), "{line}");
        assert!(line.contains("base_url=\"http://h:1/v1\""), "{line}");
        assert_eq!(args[args.len() - 2..], ["--", "a -task"]);
        context.instructions = Some("Be \"brief\".".into());
        context.mcp_servers = vec![crate::adapter::McpServer {
            name: "notes".into(),
            command: "notes-server".into(),
            args: vec!["--stdio".into()],
            env: [("TOKEN".to_string(), "t".to_string())].into(),
        }];
        let line = Codex
            .invocation(&context, "gpt-5", Path::new("/s"))
            .unwrap()
            .args
            .join(" ");
        assert!(
            line.contains(r#"developer_instructions="Be \"brief\".""#),
            "{line}"
        );
        assert!(
            line.contains(
                r#"mcp_servers."notes"={command="notes-server",args=["--stdio"],env={"TOKEN"="t"}}"#
            ),
            "{line}"
        );
        context.permission_mode = PermissionMode::BypassPermissions;
        let args = Codex
            .invocation(&context, "gpt-5", Path::new("/s"))
            .unwrap()
            .args;
        assert!(args.contains(&"--dangerously-bypass-approvals-and-sandbox".to_string()));
    }
}
