//! Claude Code (`claude -p … --output-format stream-json --verbose`).
//!
//! Its lines: `system`/`init` (session, model, tools), `assistant` (one
//! content block of a model message per line: text or `tool_use`), `user`
//! (the `tool_result`s), and a last `result` with the answer, the number of
//! turns, the cost it reports, its usage and the calls it refused.

use crate::adapter::ExecutionContext;
use crate::capabilities::{CostReporting, Vendor};
use crate::external::{Cli, CliInfo, Invocation, mcp_servers};
use crate::normalize::{RunSoFar, StreamParser, count, text};
use kaizen_protocol::{Event, PermissionDenial, PermissionMode, Status};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;

/// Claude Code.
pub(crate) struct ClaudeCode;

const INFO: CliInfo = CliInfo {
    name: "claude-code",
    program: "claude",
    package: "@anthropic-ai/claude-code",
    vendor: Vendor::Anthropic,
    default_model: "claude-sonnet-4-5",
    tools: &[
        "Bash",
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Grep",
        "WebFetch",
        "WebSearch",
        "Task",
        "TodoWrite",
        "NotebookEdit",
    ],
    sandbox: "permission rules; optional bubblewrap sandbox for Bash",
    cost: CostReporting::Reported,
    max_context_tokens: 200_000,
    env_vars: &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CONFIG_DIR",
        // Claude Code refuses bypassPermissions as root unless it is told
        // it runs in a sandbox; only the user can say so.
        "IS_SANDBOX",
    ],
};

impl Cli for ClaudeCode {
    fn info(&self) -> &'static CliInfo {
        &INFO
    }

    fn invocation(
        &self,
        context: &ExecutionContext,
        model: &str,
        scratch: &Path,
    ) -> Result<Invocation, String> {
        let limits = &context.limits;
        let mut args: Vec<String> = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            model,
            "--permission-mode",
            context.permission_mode.as_str(),
        ]
        .map(String::from)
        .to_vec();
        args.extend(["--max-turns".to_string(), limits.max_cycles.to_string()]);
        if limits.budget_usd > 0.0 {
            args.extend([
                "--max-budget-usd".to_string(),
                limits.budget_usd.to_string(),
            ]);
        }
        for (flag, rules) in [
            ("--allowedTools", &context.allowed_tools),
            ("--disallowedTools", &context.disallowed_tools),
        ] {
            if !rules.is_empty() {
                args.push(flag.to_string());
                args.push(rules.join(","));
            }
        }
        if let Some(resume) = &context.resume {
            args.extend(["--resume".to_string(), resume.session.clone()]);
        }
        if !context.trusted_workspace {
            // Not the workspace's .claude/settings*.json: their hooks
            // would run commands a hostile repository chose.
            args.extend(["--setting-sources".to_string(), "user".to_string()]);
        }
        if let Some(instructions) = &context.instructions {
            args.extend(["--append-system-prompt".to_string(), instructions.clone()]);
        }
        if !context.mcp_servers.is_empty() {
            let file = scratch.join("mcp.json");
            std::fs::write(
                &file,
                json!({ "mcpServers": mcp_servers(&context.mcp_servers) }).to_string(),
            )
            .map_err(|err| format!("cannot write its MCP config: {err}"))?;
            args.extend([
                "--strict-mcp-config".to_string(),
                "--mcp-config".to_string(),
                file.display().to_string(),
            ]);
        }
        // The task last, after `--`, so that one starting with a dash is
        // not read as a flag.
        args.extend(["--".to_string(), context.task.clone()]);
        let env = [("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
        let mut notes = Vec::new();
        if context.permission_mode == PermissionMode::Default {
            notes.push(
                "claude-code runs without a terminal: calls its default mode would ask about are refused"
                    .to_string(),
            );
        }
        Ok(Invocation {
            args,
            env,
            notes,
            after: None,
        })
    }

    fn parser(&self, _context: &ExecutionContext) -> Box<dyn StreamParser> {
        Box::new(Parser::default())
    }
}

/// Reads Claude Code's stream.
#[derive(Default)]
struct Parser {
    /// The model messages seen: one model call each.
    messages: HashSet<String>,
}

impl StreamParser for Parser {
    fn line(&mut self, line: &Value, run: &mut RunSoFar, emit: &mut dyn FnMut(Event)) {
        match line["type"].as_str().unwrap_or_default() {
            "system" if line["subtype"] == "init" => {
                run.session_id = text(line, "session_id");
                if let Some(model) = line["model"].as_str() {
                    run.model = model.to_string();
                }
                emit(Event::SessionStart {
                    session_id: run.session_id.clone(),
                    model: run.model.clone(),
                    cwd: text(line, "cwd"),
                    tools: strings(&line["tools"]),
                });
            }
            // Claude Code reports an API failure as a message of its own
            // making, not the model's: the result line carries it.
            "assistant" if line["message"]["model"] == "<synthetic>" => {}
            "assistant" => {
                let message = &line["message"];
                let id = text(message, "id");
                if self.messages.insert(id) {
                    // One line per content block, each with the message's
                    // usage: counted once, so a limit or budget can be
                    // watched before the result line gives the totals.
                    run.cycles += 1;
                    run.usage.add(&usage(&message["usage"]));
                }
                for block in message["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") => run.said(block["text"].as_str().unwrap_or(""), emit),
                        Some("tool_use") => run.call_started(
                            &text(block, "id"),
                            &text(block, "name"),
                            block["input"].clone(),
                            emit,
                        ),
                        _ => {}
                    }
                }
            }
            "user" => {
                for block in line["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        let failed = block["is_error"].as_bool().unwrap_or(false);
                        let output = result_text(&block["content"]);
                        run.call_ended(&text(block, "tool_use_id"), failed, &output, emit);
                    }
                }
            }
            "result" => {
                run.usage = usage(&line["usage"]);
                run.reported_cost = line["total_cost_usd"].as_f64();
                let failed = line["is_error"].as_bool().unwrap_or(false);
                match line["result"].as_str() {
                    Some(answer) if !failed => run.output = answer.to_string(),
                    _ => {}
                }
                run.denials = line["permission_denials"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|denial| PermissionDenial {
                        tool_name: text(denial, "tool_name"),
                        tool_use_id: text(denial, "tool_use_id"),
                        tool_input: denial["tool_input"].clone(),
                    })
                    .collect();
                run.ended = Some(verdict(line));
            }
            _ => {}
        }
    }
}

/// Anthropic's usage object as Kaizen counts it.
fn usage(usage: &Value) -> kaizen_llm::Usage {
    kaizen_llm::Usage {
        input_tokens: count(usage, "/input_tokens"),
        output_tokens: count(usage, "/output_tokens"),
        cache_read_tokens: count(usage, "/cache_read_input_tokens"),
        cache_write_tokens: count(usage, "/cache_creation_input_tokens"),
    }
}

/// How a `result` line says the run ended.
fn verdict(line: &Value) -> (Status, Option<String>) {
    let is_error = line["is_error"].as_bool().unwrap_or(false);
    let said = || {
        let errors = strings(&line["errors"]);
        match line["result"].as_str() {
            Some(result) if !result.is_empty() => result.to_string(),
            _ if !errors.is_empty() => errors.join("; "),
            _ => format!("claude-code ended with {}", text(line, "subtype")),
        }
    };
    match line["subtype"].as_str().unwrap_or_default() {
        "success" if !is_error => (Status::Complete, None),
        "error_max_turns" => (
            Status::MaxCycles,
            Some("the run reached its limit of model calls (claude-code's --max-turns)".into()),
        ),
        "error_max_budget_usd" => (
            Status::BudgetExceeded,
            Some("the run spent its budget (claude-code's --max-budget-usd)".into()),
        ),
        _ => (Status::Error, Some(said())),
    }
}

/// A tool result's content: text, or the text blocks of a list.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::McpServer;
    use crate::normalize::{kinds, replay};

    #[test]
    fn a_run_reads_as_kaizens_events_and_result() {
        let (run, events) = replay(
            &mut Parser::default(),
            include_str!("../tests/fixtures/claude-code.jsonl"),
        );
        assert_eq!(run.session_id, "fb0791ac-c985-4b71-9766-a37d4d5e7429");
        assert_eq!(run.model, "claude-sonnet-4-5");
        assert_eq!(run.cycles, 2);
        assert_eq!(run.output, "All done.");
        assert_eq!((run.usage.input_tokens, run.usage.output_tokens), (250, 25));
        assert_eq!(run.reported_cost, Some(0.0011250000000000001));
        assert_eq!(run.ended, Some((Status::Complete, None)));
        let call = &run.tool_calls[0];
        assert_eq!(
            (call.name.as_str(), call.status.as_str()),
            ("Bash", "success")
        );
        assert_eq!(
            kinds(&events),
            [
                "session_start",
                "tool_call",
                "tool_result",
                "text_delta",
                "assistant"
            ]
        );
    }

    #[test]
    fn its_turn_limit_and_api_failures_map_to_kaizens_statuses() {
        let (run, _) = replay(
            &mut Parser::default(),
            include_str!("../tests/fixtures/claude-code-max-turns.jsonl"),
        );
        assert_eq!(run.ended.unwrap().0, Status::MaxCycles);
        let (run, events) = replay(
            &mut Parser::default(),
            include_str!("../tests/fixtures/claude-code-api-error.jsonl"),
        );
        let (status, message) = run.ended.unwrap();
        assert_eq!(status, Status::Error);
        assert!(message.unwrap().contains("500"));
        // The failure is not the model's answer, nor a model call.
        assert_eq!((run.cycles, run.output.as_str()), (0, ""));
        assert_eq!(kinds(&events), ["session_start"]);
    }

    #[test]
    fn the_command_maps_limits_trust_instructions_and_mcp() {
        let scratch = tempfile::tempdir().unwrap();
        let mut context = ExecutionContext::new("-not a flag", "/w");
        context.limits.max_cycles = 7;
        context.limits.budget_usd = 0.5;
        context.instructions = Some("Be brief.".into());
        context.allowed_tools = vec!["Bash(ls:*)".into(), "Read".into()];
        context.mcp_servers = vec![McpServer {
            name: "notes".into(),
            command: "notes-server".into(),
            args: vec!["--stdio".into()],
            env: Default::default(),
        }];
        let invocation = ClaudeCode
            .invocation(&context, "claude-x", scratch.path())
            .unwrap();
        let line = invocation.args.join(" ");
        for part in [
            "--max-turns 7",
            "--max-budget-usd 0.5",
            "--allowedTools Bash(ls:*),Read",
            "--append-system-prompt Be brief.",
            "--setting-sources user",
            "--strict-mcp-config",
        ] {
            assert!(line.contains(part), "{part} in {line}");
        }
        assert!(line.ends_with("-- -not a flag"), "{line}");
        let mcp: Value =
            serde_json::from_slice(&std::fs::read(scratch.path().join("mcp.json")).unwrap())
                .unwrap();
        assert_eq!(mcp["mcpServers"]["notes"]["command"], "notes-server");
        context.trusted_workspace = true;
        let args = ClaudeCode
            .invocation(&context, "claude-x", scratch.path())
            .unwrap()
            .args;
        assert!(!args.contains(&"--setting-sources".to_string()));
    }
}
