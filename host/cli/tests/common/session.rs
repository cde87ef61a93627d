//! A session of tool calls through the real `kaizen run`: the scripted
//! model server asks for each call in turn, then answers; the results are
//! read back from what the binary sent the model.

use kaizen_model_server::{ModelServer, Reply, Script};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// The key the test provider is given; it must never reach a tool.
pub const TEST_KEY: &str = "sk-test-secret-key-0123456789";

/// What one scripted session did.
pub struct SessionRun {
    /// The process's exit status and output.
    pub output: Output,
    /// Each tool call's result text, in call order.
    pub results: Vec<String>,
    /// The `--output-format json` result object.
    pub result: Value,
}

/// A session to script: where it runs, and what else it is given.
pub struct Session<'a> {
    /// `KAIZEN_HOME`.
    pub home: &'a Path,
    /// `--cwd`.
    pub workspace: &'a Path,
    /// Extra arguments for `kaizen run`.
    pub args: Vec<String>,
    /// Extra environment variables for the binary.
    pub env: Vec<(String, String)>,
}

impl<'a> Session<'a> {
    /// A session in `workspace` with its state in `home`.
    pub fn new(home: &'a Path, workspace: &'a Path) -> Self {
        Self {
            home,
            workspace,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Runs `calls` (tool name, JSON input) one per model turn, then a
    /// final answer; returns each call's result.
    pub async fn run(&self, calls: &[(&str, Value)]) -> SessionRun {
        let mut script = Script::new();
        for (name, input) in calls {
            script = script.reply(Reply::tool(name, &input.to_string()));
        }
        script = script.reply(Reply::text("Done."));
        let server = ModelServer::start(script).await.unwrap();
        let output = self.kaizen(&server).await;
        let result = result_of(&output);
        let requests = server.requests();
        let results = requests
            .last()
            .map(|last| tool_results(&last.body))
            .unwrap_or_default();
        assert_eq!(
            results.len(),
            calls.len(),
            "every call should have a result; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        SessionRun {
            output,
            results,
            result,
        }
    }

    async fn kaizen(&self, server: &ModelServer) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_kaizen"));
        cmd.args(["run", "--model", "gpt-4o-mini", "--output-format", "json"])
            .args(&self.args)
            .arg("--cwd")
            .arg(self.workspace)
            .arg("Do the task.")
            .env("KAIZEN_HOME", self.home)
            .env("KAIZEN_CACHE_DIR", super::cache_dir())
            .env("OPENAI_API_KEY", TEST_KEY)
            .env("OPENAI_BASE_URL", server.openai_base_url())
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        for var in [
            "ANTHROPIC_API_KEY",
            "OLLAMA_HOST",
            "KAIZEN_MODEL",
            "KAIZEN_LOG",
        ] {
            cmd.env_remove(var);
        }
        cmd.output().await.unwrap()
    }
}

/// The tool results in an OpenAI-style request body, in order.
pub fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
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
