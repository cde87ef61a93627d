//! Tool calls that do not come from a model's turn (an MCP client's, an
//! embedder's), run through the same guard as the loop's: permission rules
//! and mode, `PreToolUse` hooks, the approver, `PostToolUse` hooks. One
//! [`DirectSession`] keeps what a session's calls share (files read, the
//! todo list) between calls.

use crate::admit::Gatekeeper;
use crate::calls::{CallOutcome, PendingCall};
use crate::guard::Guard;
use crate::hooks::PayloadBase;
use crate::step_executor::InProcess;
use crate::tool_calls::run_calls;
use kaizen_protocol::{Approver, Observer};
use kaizen_tools::{CallContext, ContentPart, SessionNotes, ToolError, ToolOutput, ToolRegistry};
use std::path::PathBuf;
use std::sync::Arc;

/// A session of calls made from outside the loop.
pub struct DirectSession {
    /// The session's id (what hooks see as `session_id`).
    pub session_id: String,
    /// Where tools work.
    pub workspace: PathBuf,
    /// What decides each call.
    pub guard: Arc<Guard>,
    notes: Arc<SessionNotes>,
}

impl DirectSession {
    /// A session `session_id` in `workspace` under `guard`.
    pub fn new(
        session_id: impl Into<String>,
        workspace: impl Into<PathBuf>,
        guard: Arc<Guard>,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            workspace: workspace.into(),
            guard,
            notes: Arc::default(),
        }
    }

    /// What the session's calls share: an embedder narrows them through
    /// it (a command's `allowed-tools`, as its active skill).
    pub fn notes(&self) -> &SessionNotes {
        &self.notes
    }

    /// Calls tool `name` of `tools` with `arguments` (JSON text) as call
    /// `id`, reporting to `observer`; a call that asks goes to `approver`
    /// when given (an MCP client's user), else to the guard's. A refusal or
    /// failure is the error; what hooks added comes after the output's
    /// text.
    pub async fn call(
        &self,
        tools: &ToolRegistry,
        observer: &dyn Observer,
        id: &str,
        name: &str,
        arguments: &str,
        approver: Option<&dyn Approver>,
    ) -> Result<ToolOutput, ToolError> {
        let ctx = CallContext {
            session_id: self.session_id.clone(),
            call_id: id.to_string(),
            workspace: self.workspace.clone(),
            cwd: self.workspace.clone(),
            notes: self.notes.clone(),
            sub_agents: Default::default(),
            completions: Default::default(),
            history: Default::default(),
        };
        let base = PayloadBase {
            session_id: self.session_id.clone(),
            transcript_path: None,
            cwd: self.workspace.display().to_string(),
            permission_mode: self.guard.permissions.mode().as_str(),
            mode_limit: None,
            agent: None,
        };
        let gate = Gatekeeper {
            registry: tools,
            ctx: &ctx,
            guard: &self.guard,
            observer,
            base: &base,
            approver,
            stopped: Default::default(),
            // A call from outside any model's turn: no engine journals it.
            steps: &InProcess,
            cycle: 0,
            scope: None,
        };
        let call = PendingCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let outcome = run_calls(&gate, vec![call]).await.pop();
        outcome.map_or_else(|| Err(missing(name)), with_context)
    }
}

fn missing(name: &str) -> ToolError {
    ToolError::new(
        kaizen_tools::ToolErrorKind::Failed,
        format!("{name} gave no result"),
    )
}

/// The outcome's result with what hooks added after its text.
fn with_context(outcome: CallOutcome) -> Result<ToolOutput, ToolError> {
    let context: Vec<String> = outcome
        .context
        .iter()
        .map(|text| format!("<hook-context>\n{text}\n</hook-context>"))
        .collect();
    match outcome.result {
        Ok(mut output) => {
            output
                .content
                .extend(context.into_iter().map(|text| ContentPart::Text { text }));
            Ok(output)
        }
        Err(mut error) => {
            for text in context {
                error.message.push('\n');
                error.message.push_str(&text);
            }
            Err(error)
        }
    }
}
