//! `kaizen run` against the scripted model server: a workspace and a home
//! per run, the provider's variables pointing at the server, and what the
//! model was sent.

use kaizen_model_server::{ModelServer, Wire};
use std::path::PathBuf;
use std::process::Output;
use tempfile::TempDir;

// Shared with the scripted sessions; not every suite uses them.
/// The API key the runs use; it must never show up in what the user sees.
#[allow(unused_imports)]
pub use super::session::TEST_KEY as KEY;
/// The one JSON object `--output-format json` printed.
#[allow(unused_imports)]
pub use super::session::result_of;

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

    /// `kaizen run ARGS`, against `server` through `wire`'s environment
    /// variables (and no other provider's).
    pub fn command(
        &self,
        server: Option<(&ModelServer, Wire)>,
        args: &[&str],
    ) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_kaizen"));
        cmd.arg("run")
            .args(args)
            .arg("--cwd")
            .arg(self.workspace.path())
            .env("KAIZEN_HOME", self.home.path())
            .env("KAIZEN_CACHE_DIR", super::cache_dir());
        if self.test_plugins {
            cmd.arg("--plugins")
                .arg(kaizen_test_artifacts::plugins_root());
        }
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
            None => {}
        }
        cmd
    }

    /// Runs [`Self::command`] to its end.
    pub async fn kaizen(&self, server: Option<(&ModelServer, Wire)>, args: &[&str]) -> Output {
        self.command(server, args).output().await.unwrap()
    }
}

/// The tool results the model was sent in request `n` over the OpenAI
/// wire, as (id, text).
pub fn results_sent(server: &ModelServer, n: usize) -> Vec<(String, String)> {
    let body = &server.requests()[n].body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}
