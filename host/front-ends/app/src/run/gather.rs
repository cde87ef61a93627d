//! What a typed command's prompt gathers before it is sent (`` !`cmd` ``
//! and `@file`, see [`kaizen_claude::context`]), through the session's
//! own `Bash` and `Read`: its permission rules and mode, its hooks, its
//! approver and the OS sandbox decide each, as they would the model's
//! call, and the command's `allowed-tools` narrow them.

use kaizen_claude::context::{GatherError, GatherFuture, Gatherer};
use kaizen_loop::{Agent, DirectSession};
use kaizen_protocol::Silent;
use kaizen_tools::{ActiveSkill, ToolErrorKind};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU32, Ordering};

/// Gathers through an agent's tools and guard.
pub(super) struct ToolGatherer<'a> {
    agent: &'a Agent<'a>,
    calls: DirectSession,
    next_id: AtomicU32,
}

impl<'a> ToolGatherer<'a> {
    /// For `agent`'s session `session_id`, its calls narrowed by what the
    /// command allows.
    pub(super) fn new(
        agent: &'a Agent<'a>,
        session_id: &str,
        narrows: Option<ActiveSkill>,
    ) -> Self {
        let workspace = agent.config.workspace.clone();
        let calls = DirectSession::new(session_id, workspace, agent.guard.clone());
        calls.notes().set_active_skill(narrows);
        Self {
            agent,
            calls,
            next_id: AtomicU32::new(1),
        }
    }

    /// Calls `name` with `input`: its text, or why not. A tool that is not
    /// there, or a file that is not, is [`GatherError::Missing`].
    async fn call(&self, name: &str, input: Value) -> Result<String, GatherError> {
        let id = format!("gather_{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        // What runs here is part of the user's message, not a step of
        // the model's: the stream shows the prompt it became.
        let called = self
            .calls
            .call(
                self.agent.tools,
                &Silent,
                &id,
                name,
                &input.to_string(),
                None,
            )
            .await;
        match called {
            Ok(output) => Ok(output.joined_text()),
            Err(err) if err.kind == ToolErrorKind::NotFound => Err(GatherError::Missing),
            Err(err) => Err(GatherError::Failed(err.message)),
        }
    }
}

impl Gatherer for ToolGatherer<'_> {
    fn run<'b>(&'b self, command: &'b str) -> GatherFuture<'b> {
        Box::pin(self.call(
            "Bash",
            json!({"command": command, "description": "gathered for a command's prompt"}),
        ))
    }

    fn read<'b>(&'b self, path: &'b str) -> GatherFuture<'b> {
        let path = self.agent.config.workspace.join(path);
        Box::pin(async move {
            self.call("Read", json!({"file_path": path.display().to_string()}))
                .await
        })
    }
}
