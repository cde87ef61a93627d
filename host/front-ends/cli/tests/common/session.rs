//! A session of tool calls through the real `kaizen run`: the scripted
//! model server asks for each call in turn, then answers; the results are
//! read back from what the binary sent the model.

use super::run::{result_of, run_command, tool_results};
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

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
        let args: Vec<&str> = ["--model", "gpt-4o-mini", "--output-format", "json"]
            .into_iter()
            .chain(self.args.iter().map(String::as_str))
            .collect();
        let mut cmd = run_command(
            self.home,
            self.workspace,
            Some((server, Wire::OpenAi)),
            &args,
        );
        cmd.arg("Do the task.");
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        tokio::process::Command::from(cmd).output().await.unwrap()
    }
}
