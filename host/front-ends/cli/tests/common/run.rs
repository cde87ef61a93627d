//! `kaizen run` against the scripted model server: a workspace and a home
//! per run, the provider's variables pointing at the server, and what the
//! model was sent.

use kaizen_model_server::{ModelServer, Recorded, Script, Wire};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

/// The API key the runs use; it must never show up in what the user sees,
/// nor reach a tool.
pub const KEY: &str = "sk-test-secret-key-0123456789";

/// A workspace and a home for one run.
pub struct Run {
    /// `KAIZEN_HOME`.
    pub home: TempDir,
    /// The workspace (`--cwd`).
    pub workspace: TempDir,
    /// Whether the test plugins (`tests/plugins`) are loaded besides the
    /// built-ins.
    pub test_plugins: bool,
}

impl Run {
    /// A run with the built-in and the test plugins.
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
            test_plugins: true,
        }
    }

    /// A run with the built-in plugins only.
    pub fn builtins_only() -> Self {
        Self {
            test_plugins: false,
            ..Self::new()
        }
    }

    /// The workspace as the host sees it (symlinks resolved).
    pub fn ws(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    /// `kaizen run ARGS` here (see [`run_command`]), with the test plugins
    /// when the run has them.
    pub fn command(&self, server: Option<(&ModelServer, Wire)>, args: &[&str]) -> Command {
        let mut cmd = run_command(self.home.path(), self.workspace.path(), server, args);
        if self.test_plugins {
            cmd.arg("--plugins")
                .arg(kaizen_test_artifacts::plugins_root());
        }
        cmd
    }

    /// Runs [`Self::command`] to its end.
    pub async fn kaizen(&self, server: Option<(&ModelServer, Wire)>, args: &[&str]) -> Output {
        tokio::process::Command::from(self.command(server, args))
            .output()
            .await
            .unwrap()
    }

    /// Writes `config` as the user's config (`$KAIZEN_HOME/config.toml`).
    pub fn set_config(&self, config: impl AsRef<str>) {
        std::fs::write(self.home.path().join("config.toml"), config.as_ref()).unwrap();
    }

    /// A run here against a model server of its own answering `script`,
    /// over OpenAI's wire unless told otherwise.
    pub fn scripted(&self, script: Script) -> ScriptedRun<'_> {
        ScriptedRun {
            run: self,
            script,
            wire: Wire::OpenAi,
            model: None,
        }
    }

    /// [`scripted_run`] here, in the workspace as the host sees it.
    pub async fn scripted_run(
        &self,
        replies: Vec<kaizen_model_server::Reply>,
        args: &[&str],
    ) -> (Output, Vec<Recorded>) {
        scripted_run(self.home.path(), &self.ws(), replies, args, &[]).await
    }
}

/// A `kaizen run` in a [`Run`] against a scripted model server started for
/// it alone: the model and wire to set, then the flags to run with.
pub struct ScriptedRun<'a> {
    run: &'a Run,
    script: Script,
    wire: Wire,
    model: Option<&'a str>,
}

impl<'a> ScriptedRun<'a> {
    /// Over `wire` instead of OpenAI's.
    pub fn over(self, wire: Wire) -> Self {
        Self { wire, ..self }
    }

    /// With `--model MODEL` first.
    pub fn model(self, model: &'a str) -> Self {
        Self {
            model: Some(model),
            ..self
        }
    }

    /// `kaizen run [--model MODEL] --output-format json ARGS`.
    pub async fn json(self, args: &[&str]) -> Ran {
        self.formatted(Some("json"), args).await
    }

    /// `kaizen run [--model MODEL] --output-format events ARGS`.
    pub async fn stream_json(self, args: &[&str]) -> Ran {
        self.formatted(Some("events"), args).await
    }

    /// `kaizen run [--model MODEL] ARGS`: the text output.
    pub async fn text(self, args: &[&str]) -> Ran {
        self.formatted(None, args).await
    }

    async fn formatted(self, format: Option<&str>, args: &[&str]) -> Ran {
        let server = ModelServer::start(self.script).await.unwrap();
        let mut all = Vec::new();
        if let Some(model) = self.model {
            all.extend(["--model", model]);
        }
        if let Some(format) = format {
            all.extend(["--output-format", format]);
        }
        all.extend(args);
        let output = self.run.kaizen(Some((&server, self.wire)), &all).await;
        Ran { output, server }
    }
}

/// What a [`ScriptedRun`] printed, and the server it ran against (for the
/// requests it got).
pub struct Ran {
    /// The process's exit status and output.
    pub output: Output,
    /// The scripted model.
    pub server: ModelServer,
}

impl Ran {
    /// The JSON result (see [`result_of`]).
    pub fn result(&self) -> Value {
        result_of(&self.output)
    }

    /// The events (see [`events_of`]).
    pub fn events(&self) -> Vec<Value> {
        events_of(&self.output)
    }

    /// The exit code.
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// Its stdout.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// Its stderr.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
}

/// `kaizen run ARGS --cwd WORKSPACE` with its own `KAIZEN_HOME`, against
/// `server` through `wire`'s environment variables (and no other
/// provider's).
pub fn run_command(
    home: &Path,
    workspace: &Path,
    server: Option<(&ModelServer, Wire)>,
    args: &[&str],
) -> Command {
    let run: Vec<&str> = std::iter::once("run").chain(args.iter().copied()).collect();
    provider_command(home, workspace, server, &run)
}

/// `kaizen ARGS --cwd WORKSPACE` with its own `KAIZEN_HOME`, against
/// `server` as [`run_command`] sets it up.
pub fn provider_command(
    home: &Path,
    workspace: &Path,
    server: Option<(&ModelServer, Wire)>,
    args: &[&str],
) -> Command {
    let mut cmd = super::command(home, workspace, args);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
        "KAIZEN_MODEL",
        "KAIZEN_LOG",
    ] {
        cmd.env_remove(var);
    }
    match server {
        Some((server, Wire::OpenAi)) => {
            cmd.env("OPENAI_API_KEY", KEY)
                .env("OPENAI_BASE_URL", server.openai_base_url());
        }
        Some((server, Wire::Anthropic)) => {
            cmd.env("ANTHROPIC_API_KEY", KEY)
                .env("ANTHROPIC_BASE_URL", server.anthropic_base_url());
        }
        Some((server, Wire::Ollama)) => {
            cmd.env("OLLAMA_HOST", server.ollama_host());
        }
        Some((_, wire @ (Wire::Responses | Wire::Gemini))) => {
            panic!("Kaizen has no provider for {wire:?}; its runtimes do")
        }
        None => {}
    }
    cmd
}

/// The one JSON object `--output-format json` printed.
pub fn result_of(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|err| {
        panic!(
            "not one JSON object ({err}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The result object of a `--output-format json` run that must have
/// completed.
pub fn completed(output: &Output) -> Value {
    let result = result_of(output);
    assert_eq!(
        result["status"],
        "complete",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    result
}

/// The JSON values `--output-format events` printed, one a line.
pub fn events_of(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

/// The names of the tools an OpenAI-style request body offered the model.
pub fn offered_tools(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect()
}

/// `field` (`"name"`, `"status"`) of each tool call in a result object, in
/// call order.
pub fn call_fields<'a>(result: &'a Value, field: &str) -> Vec<&'a str> {
    result["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call[field].as_str().unwrap())
        .collect()
}

/// The tool results in an OpenAI-style request body, in call order.
pub fn tool_results(body: &Value) -> Vec<String> {
    tool_messages(body, "content")
}

/// The tool results the model was sent in request `n` over the OpenAI
/// wire, in call order.
pub fn results_sent(server: &ModelServer, n: usize) -> Vec<String> {
    tool_results(&request(server, n).body)
}

/// The call ids of the tool results in request `n` over the OpenAI wire.
pub fn result_ids_sent(server: &ModelServer, n: usize) -> Vec<String> {
    tool_messages(&request(server, n).body, "tool_call_id")
}

/// Request `n` the server received.
fn request(server: &ModelServer, n: usize) -> Recorded {
    let mut requests = server.requests();
    let count = requests.len();
    assert!(n < count, "only {count} requests were made");
    requests.swap_remove(n)
}

/// `field` of each tool message in an OpenAI-style request body.
fn tool_messages(body: &Value, field: &str) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m[field].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `kaizen run --model gpt-4o-mini --output-format json ARGS "Do the
/// task."` in `workspace` with its state in `home` and `env` set, against
/// a scripted server answering `replies` in turn: the binary's output and
/// every request the model got.
pub async fn scripted_run(
    home: &Path,
    workspace: &Path,
    replies: Vec<kaizen_model_server::Reply>,
    args: &[&str],
    env: &[(&str, &Path)],
) -> (Output, Vec<Recorded>) {
    let server = ModelServer::start(self::replies(replies)).await.unwrap();
    let mut all = vec!["--model", "gpt-4o-mini", "--output-format", "json"];
    all.extend(args);
    let mut cmd = run_command(home, workspace, Some((&server, Wire::OpenAi)), &all);
    cmd.current_dir(workspace).arg("Do the task.");
    for (name, value) in env {
        cmd.env(name, value);
    }
    let output = tokio::process::Command::from(cmd).output().await.unwrap();
    (output, server.requests())
}

/// The model's call of `Bash` with `command`.
pub fn bash(command: &str) -> kaizen_model_server::Reply {
    kaizen_model_server::Reply::tool(
        "Bash",
        &serde_json::json!({ "command": command }).to_string(),
    )
}

/// A user config that gives Bash the network: its effects then reach
/// beyond the grant, so the default mode asks before it runs.
pub const NETWORK_BASH: &str =
    "[grants.bash]\nprocess = { programs = [\"bash\"], network = true }\n";

/// The events a session of [`every_event_session`] fires (Notification
/// needs a terminal, Interrupt a Ctrl-C, PreCompact a compaction).
pub const SESSION_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreThink",
    "PostThink",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCheckpoint",
    "PostCheckpoint",
    "SessionEnd",
];

/// A session that reaches every event it can without a terminal: a
/// `Task` whose Explore sub-agent reads `notes.txt` (written in
/// `workspace`), then a Bash call that asks (with [`NETWORK_BASH`] in
/// `home`'s config) and is refused for want of a user. Its replies.
pub fn every_event_session(home: &Path, workspace: &Path) -> Vec<kaizen_model_server::Reply> {
    use kaizen_model_server::Reply;
    std::fs::write(home.join("config.toml"), NETWORK_BASH).unwrap();
    std::fs::write(workspace.join("notes.txt"), "hello\n").unwrap();
    let task = serde_json::json!({
        "description": "look", "prompt": "Read the notes.", "subagent_type": "Explore"
    });
    let read = serde_json::json!({"file_path": workspace.join("notes.txt")});
    vec![
        Reply::tool("Task", &task.to_string()),
        Reply::tool("Read", &read.to_string()),
        Reply::text("The notes say hello. DONE"),
        bash("echo hi"),
        Reply::text("Finished. DONE"),
    ]
}

/// What an `events` run printed, and the server it ran against.
pub struct StreamRun {
    /// The process's output.
    pub output: Output,
    /// Its stdout, one JSON value per line.
    pub lines: Vec<Value>,
    /// The scripted model (for the requests it got).
    pub server: ModelServer,
    home: TempDir,
    // Kept until the run's values are read.
    _workspace: TempDir,
}

impl StreamRun {
    /// Its stderr.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// The run's `KAIZEN_HOME` (its sessions are there).
    #[allow(dead_code)]
    pub fn home(&self) -> &Path {
        self.home.path()
    }
}

/// `kaizen run --model gpt-4o-mini --output-format events ARGS` in a
/// fresh workspace with `config` as the user's config, against a server
/// answering `script`; OpenAI's and Anthropic's variables both point at it.
pub async fn stream_run(
    config: &str,
    script: kaizen_model_server::Script,
    args: &[&str],
) -> StreamRun {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    let server = ModelServer::start(script).await.unwrap();
    let mut all = vec!["--model", "gpt-4o-mini", "--output-format", "events"];
    all.extend(args);
    let mut cmd = run_command(home.path(), ws.path(), Some((&server, Wire::OpenAi)), &all);
    cmd.current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.anthropic_base_url());
    let output = tokio::process::Command::from(cmd).output().await.unwrap();
    let lines = events_of(&output);
    StreamRun {
        output,
        lines,
        server,
        home,
        _workspace: ws,
    }
}

/// A script answering `replies` in turn.
pub fn replies(replies: Vec<kaizen_model_server::Reply>) -> Script {
    replies.into_iter().fold(Script::new(), Script::reply)
}
