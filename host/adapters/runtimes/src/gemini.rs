//! Gemini CLI (`gemini -p … --output-format stream-json`).
//!
//! Its lines: `init` (session and model), `message` (the user's and the
//! assistant's text, the latter in deltas), `tool_use`, `tool_result`,
//! `error`, and a last `result` with a status and the run's token counts.
//! It reports no cost.
//!
//! Settings go over the user's own in a home of the run's own
//! ([`GeminiHome`], `GEMINI_CLI_HOME`), which leaves the user's files
//! untouched: API-key authentication when a key is given (a base-URL
//! override alone selects an authentication headless mode refuses), the
//! MCP servers, the turn limit, no usage statistics or update checks.
//! Telemetry is also turned off by its variable. (Its system settings
//! file, the layer meant for overrides, is read only when root owns it
//! and every directory above it, which no user's program can arrange.)

use crate::adapter::ExecutionContext;
use crate::capabilities::{CostReporting, Vendor};
use crate::external::{AfterRun, Cli, CliInfo, Invocation, mcp_servers};
use crate::gemini_home::GeminiHome;
use crate::normalize::{CycleCounter, RunSoFar, StreamParser, count, text};
use kaizen_protocol::{Event, PermissionMode, Status};
use serde_json::{Value, json};
use std::path::Path;

/// Gemini CLI.
pub(crate) struct GeminiCli;

const INFO: CliInfo = CliInfo {
    name: "gemini-cli",
    program: "gemini",
    package: "@google/gemini-cli",
    vendor: Vendor::Gemini,
    default_model: "gemini-2.5-pro",
    tools: &[
        "run_shell_command",
        "read_file",
        "write_file",
        "replace",
        "glob",
        "search_file_content",
        "list_directory",
        "web_fetch",
        "google_web_search",
        "save_memory",
        "write_todos",
    ],
    sandbox: "optional container or Seatbelt sandbox (GEMINI_SANDBOX)",
    cost: CostReporting::Estimated,
    max_context_tokens: 1_048_576,
    env_vars: &[
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GEMINI_CLI_HOME",
        "GEMINI_SANDBOX",
    ],
};

impl Cli for GeminiCli {
    fn info(&self) -> &'static CliInfo {
        &INFO
    }

    fn invocation(
        &self,
        context: &ExecutionContext,
        model: &str,
        scratch: &Path,
    ) -> Result<Invocation, String> {
        let mut notes = Vec::new();
        let mode = match context.permission_mode {
            PermissionMode::Default | PermissionMode::DontAsk => "default",
            PermissionMode::AcceptEdits => "auto_edit",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "yolo",
        };
        let mut args: Vec<String> = [
            "--output-format",
            "stream-json",
            "-m",
            model,
            "--approval-mode",
            mode,
        ]
        .map(String::from)
        .to_vec();
        if let Some(resume) = &context.resume {
            args.extend(["--resume".to_string(), resume.session.clone()]);
        }
        if context.trusted_workspace {
            // Gemini CLI's own trust, for this session only; without it,
            // it leaves the workspace's settings alone.
            args.push("--skip-trust".to_string());
        }
        if !context.allowed_tools.is_empty() {
            args.push("--allowed-tools".to_string());
            args.extend(context.allowed_tools.iter().cloned());
        }
        if !context.disallowed_tools.is_empty() {
            notes.push("gemini-cli takes no --disallowedTools rules: they are not applied".into());
        }
        if context.instructions.is_some() {
            notes.push(
                "gemini-cli can only replace its system prompt, not add to it: the extra instructions go before the task"
                    .into(),
            );
        }
        let mut overrides = vec![
            ("/privacy/usageStatisticsEnabled", json!(false)),
            ("/telemetry/enabled", json!(false)),
            ("/general/enableAutoUpdate", json!(false)),
            ("/general/enableAutoUpdateNotification", json!(false)),
            ("/model/maxSessionTurns", json!(context.limits.max_cycles)),
        ]
        .into_iter()
        .map(|(pointer, value)| (pointer.to_string(), value))
        .collect::<Vec<_>>();
        if context.env.contains_key("GEMINI_API_KEY") {
            overrides.push((
                "/security/auth/selectedType".to_string(),
                json!("gemini-api-key"),
            ));
        }
        if let Value::Object(servers) = mcp_servers(&context.mcp_servers) {
            for (name, server) in servers {
                overrides.push((format!("/mcpServers/{}", pointer_key(&name)), server));
            }
        }
        let real_home = context
            .env
            .get("GEMINI_CLI_HOME")
            .or_else(|| context.env.get("HOME"))
            .filter(|home| !home.is_empty())
            .ok_or("neither GEMINI_CLI_HOME nor HOME is set: set HOME (Gemini CLI keeps its sign-in and chats under it)")?;
        let home = GeminiHome::lend(scratch, Path::new(real_home), &overrides)?;
        let task = match &context.instructions {
            Some(instructions) => format!("{instructions}\n\n{}", context.task),
            None => context.task.clone(),
        };
        args.extend(["--prompt".to_string(), task]);
        let env = [
            ("GEMINI_CLI_HOME", home.home().display().to_string()),
            ("GEMINI_TELEMETRY_ENABLED", "false".to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into();
        let after: AfterRun = Box::new(move || home.hand_back());
        Ok(Invocation {
            args,
            env,
            notes,
            after: Some(after),
        })
    }

    fn parser(&self, _context: &ExecutionContext) -> Box<dyn StreamParser> {
        Box::new(Parser::default())
    }
}

/// Reads Gemini CLI's stream.
#[derive(Default)]
struct Parser {
    cycles: CycleCounter,
    /// The assistant's text of the current model call, from its deltas.
    text: String,
}

impl Parser {
    /// Ends the assistant's text of the current call, if any.
    fn flush(&mut self, run: &mut RunSoFar, emit: &mut dyn FnMut(Event)) {
        let text = std::mem::take(&mut self.text);
        if !text.is_empty() {
            run.output = text.clone();
            emit(Event::Assistant {
                cycle: run.cycles.max(1),
                model: run.model.clone(),
                text,
            });
        }
    }
}

impl StreamParser for Parser {
    fn line(&mut self, line: &Value, run: &mut RunSoFar, emit: &mut dyn FnMut(Event)) {
        match line["type"].as_str().unwrap_or_default() {
            "init" => {
                run.session_id = text(line, "session_id");
                if let Some(model) = line["model"].as_str() {
                    run.model = model.to_string();
                }
                emit(Event::SessionStart {
                    session_id: run.session_id.clone(),
                    model: run.model.clone(),
                    cwd: run.cwd.clone(),
                    tools: INFO.tools.iter().map(|t| t.to_string()).collect(),
                });
            }
            "message" if line["role"] == "assistant" => {
                self.cycles.model_acted(run);
                let delta = line["content"].as_str().unwrap_or_default();
                if !delta.is_empty() {
                    emit(Event::TextDelta {
                        text: delta.to_string(),
                    });
                    self.text.push_str(delta);
                }
            }
            "tool_use" => {
                self.cycles.model_acted(run);
                self.flush(run, emit);
                run.call_started(
                    &text(line, "tool_id"),
                    &text(line, "tool_name"),
                    line["parameters"].clone(),
                    emit,
                );
            }
            "tool_result" => {
                let failed = line["status"] != "success";
                let output = match line["output"].as_str() {
                    Some(output) => output.to_string(),
                    None => line["error"]["message"].as_str().unwrap_or("").to_string(),
                };
                run.call_ended(&text(line, "tool_id"), failed, &output, emit);
                self.cycles.results_came();
            }
            "result" => {
                self.flush(run, emit);
                let stats = &line["stats"];
                run.usage.input_tokens =
                    count(stats, "/input_tokens").saturating_sub(count(stats, "/cached"));
                run.usage.cache_read_tokens = count(stats, "/cached");
                run.usage.output_tokens = count(stats, "/output_tokens");
                let error_type = line["error"]["type"].as_str().unwrap_or_default();
                run.ended = Some(match line["status"].as_str() {
                    Some("success") => (Status::Complete, None),
                    // Its own turn limit, set from --max-cycles.
                    _ if error_type.contains("TurnLimited") => (
                        Status::MaxCycles,
                        Some("the run reached its limit of model calls (gemini-cli's maxSessionTurns)".into()),
                    ),
                    _ => (Status::Error, Some(error_message(line))),
                });
            }
            "error" => {
                self.flush(run, emit);
                emit(Event::Notice {
                    source: "gemini-cli".to_string(),
                    text: text(line, "message"),
                });
            }
            _ => {}
        }
    }
}

/// `name` as one key of a JSON pointer.
fn pointer_key(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// What a failed `result` says.
fn error_message(line: &Value) -> String {
    match line["error"]["message"].as_str() {
        Some(message) => message.to_string(),
        None => "gemini-cli reported an error".to_string(),
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
            include_str!("../tests/fixtures/gemini-cli.jsonl"),
        );
        assert_eq!(run.session_id, "20020e8f-cade-41c8-bb8f-940388958735");
        assert_eq!(run.model, "gemini-2.5-flash");
        assert_eq!(run.cycles, 2);
        assert_eq!(run.output, "All done.");
        assert_eq!((run.usage.input_tokens, run.usage.output_tokens), (250, 25));
        assert_eq!(run.reported_cost, None);
        assert_eq!(run.ended, Some((Status::Complete, None)));
        assert_eq!(run.tool_calls[0].name, "run_shell_command");
        assert_eq!(
            kinds(&events),
            [
                "session_start",
                "tool_call",
                "tool_result",
                "text_delta",
                "text_delta",
                "text_delta",
                "assistant"
            ]
        );
    }

    #[test]
    fn a_failed_result_is_an_error_with_its_message() {
        let (run, _) = replay(
            &mut Parser::default(),
            include_str!("../tests/fixtures/gemini-cli-failed.jsonl"),
        );
        let (status, message) = run.ended.unwrap();
        assert_eq!(status, Status::Error);
        assert!(message.unwrap().contains("500"));
        let turns = json!({"type": "result", "status": "error",
            "error": {"type": "FatalTurnLimitedError", "message": "Reached max session turns"}});
        let mut run = RunSoFar::default();
        Parser::default().line(&turns, &mut run, &mut |_| {});
        assert_eq!(run.ended.unwrap().0, Status::MaxCycles);
    }

    /// The settings of the run `invocation` starts.
    fn settings_of(invocation: &Invocation) -> Value {
        let home = Path::new(&invocation.env["GEMINI_CLI_HOME"]);
        serde_json::from_slice(&std::fs::read(home.join(".gemini/settings.json")).unwrap()).unwrap()
    }

    #[test]
    fn settings_carry_auth_the_turn_limit_and_trust_is_kaizens() {
        // Everything under a directory anyone may write, as `/tmp`.
        let shared = tempfile::tempdir().unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            let sticky = std::fs::Permissions::from_mode(0o1777);
            std::fs::set_permissions(shared.path(), sticky).unwrap();
        }
        let user = shared.path().join("user");
        let mut context = ExecutionContext::new("task", "/w");
        context.env = [
            ("GEMINI_API_KEY".to_string(), "k".to_string()),
            ("HOME".to_string(), user.display().to_string()),
        ]
        .into();
        context.limits.max_cycles = 9;
        context.permission_mode = PermissionMode::AcceptEdits;
        let invoke = |context: &ExecutionContext| {
            let scratch = tempfile::tempdir_in(shared.path()).unwrap();
            let invocation = GeminiCli
                .invocation(context, "gemini-x", scratch.path())
                .unwrap();
            (invocation, scratch)
        };
        let (invocation, _scratch) = invoke(&context);
        let line = invocation.args.join(" ");
        assert!(line.contains("--approval-mode auto_edit"), "{line}");
        assert!(!line.contains("--skip-trust"), "{line}");
        let settings = settings_of(&invocation);
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert_eq!(settings["model"]["maxSessionTurns"], 9);
        assert_eq!(settings["telemetry"]["enabled"], false);
        assert!(
            user.join(".gemini").is_dir(),
            "the user's state stays theirs"
        );
        context.mcp_servers = vec![crate::adapter::McpServer {
            name: "notes".into(),
            command: "notes-server".into(),
            args: Vec::new(),
            env: Default::default(),
        }];
        let (invocation, _scratch) = invoke(&context);
        let settings = settings_of(&invocation);
        assert_eq!(settings["mcpServers"]["notes"]["command"], "notes-server");
        context.trusted_workspace = true;
        let (invocation, _scratch) = invoke(&context);
        assert!(invocation.args.contains(&"--skip-trust".to_string()));
        context.env.remove("HOME");
        let scratch = tempfile::tempdir().unwrap();
        let err = GeminiCli
            .invocation(&context, "gemini-x", scratch.path())
            .err()
            .unwrap();
        assert!(err.contains("set HOME"), "{err}");
    }
}
