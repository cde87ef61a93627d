//! What the loop reports as it runs, for output formats and embedders.

use crate::result::RunResult;
use serde::{Deserialize, Serialize};

/// One thing that happened in a run. Serialized as one line of
/// `--output-format events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The run started.
    SessionStart {
        /// The session's id.
        session_id: String,
        /// The model.
        model: String,
        /// The workspace.
        cwd: String,
        /// Tools on offer.
        tools: Vec<String>,
    },
    /// A piece of assistant text as it streams.
    TextDelta {
        /// The piece.
        text: String,
    },
    /// A complete assistant turn's text.
    Assistant {
        /// The 1-based cycle that produced it.
        cycle: u32,
        /// The model that answered (after a fallback, the fallback's).
        model: String,
        /// The text (may be empty when the turn only calls tools).
        text: String,
    },
    /// The model called a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments as the model sent them.
        arguments: serde_json::Value,
    },
    /// A tool call finished.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// `success` or `error`.
        status: String,
        /// How long it took.
        duration_ms: u64,
        /// What the model will see (cut to the same size).
        output: String,
    },
    /// A tool (`TodoWrite`) replaced the session's todo list.
    Todos {
        /// The whole new list, one object per item.
        todos: Vec<serde_json::Value>,
    },
    /// The provider is being retried.
    Retry {
        /// The next attempt's number.
        attempt: u32,
        /// What failed.
        error: String,
    },
    /// Model `from` kept failing after its retries; the call went to `to`,
    /// the next model of its fallback chain.
    Fallback {
        /// The model that failed.
        from: String,
        /// The model tried next.
        to: String,
        /// How `from` failed.
        error: String,
    },
    /// Something happened in a sub-agent started by the tool call
    /// `call_id`.
    SubAgent {
        /// The parent's tool call that started the sub-agent.
        call_id: String,
        /// What happened.
        event: Box<Event>,
    },
    /// A tool call needs the user's approval.
    PermissionRequest {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The input the user is asked about (after hooks).
        arguments: serde_json::Value,
        /// Why it asks.
        reason: String,
    },
    /// A tool call was allowed or refused, and by what (every call that
    /// got as far as the permission check has one).
    PermissionDecision {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// `allow` or `deny`.
        decision: String,
        /// Who decided: `rule`, `mode`, `hook` or `user`.
        by: String,
        /// The rule with its origin, the hook, the mode.
        source: String,
        /// Why.
        reason: String,
    },
    /// A hook answered something other than "carry on", or failed.
    Hook {
        /// The event (`PreToolUse`, ...).
        event: String,
        /// The hook.
        hook: String,
        /// `allow`, `deny`, `ask`, `stop`, `continue` (with context), or
        /// `failed`.
        outcome: String,
        /// Its reason, or what went wrong.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A plugin's completion (the `llm` import) ran; its cost is in the
    /// run's totals.
    PluginCompletion {
        /// The plugin that asked.
        plugin: String,
        /// The tool call it asked within.
        call_id: String,
        /// The model role it asked for.
        role: String,
        /// The model that answered.
        model: String,
        /// Prompt tokens.
        input_tokens: u64,
        /// Generated tokens.
        output_tokens: u64,
        /// Its price in USD.
        cost_usd: f64,
    },
    /// A message sent while the run worked joined the conversation, before
    /// model call `cycle`.
    UserMessage {
        /// The model call it comes before.
        cycle: u32,
        /// The message.
        text: String,
    },
    /// The conversation was compacted before a model call, to stay within
    /// the model's context window.
    Compaction {
        /// `auto` (the window was filling up) or `manual`.
        trigger: String,
        /// The next request's estimated tokens before compacting.
        tokens_before: u64,
        /// And after.
        tokens_after: u64,
        /// The model's window, in tokens.
        window: u64,
        /// How many older messages were replaced.
        replaced: usize,
        /// Whether they were summarised (else only their long tool
        /// results were elided).
        summarized: bool,
        /// The model that summarised them.
        model: Option<String>,
        /// The summary's price in USD.
        cost_usd: f64,
    },
    /// The run's planner did something, or failed (and was switched off).
    Planner {
        /// The planner.
        planner: String,
        /// `plan`, `select` or `verify`.
        stage: String,
        /// `shaped`, `chosen`, `accepted`, `revise`, `bounded` or `failed`.
        outcome: String,
        /// What it did, or why it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// For `select`: how many candidate responses were asked for (each
        /// a model call).
        #[serde(skip_serializing_if = "Option::is_none")]
        candidates: Option<u32>,
    },
    /// A message for the user from a hook.
    Notice {
        /// Who says it.
        source: String,
        /// What it says.
        text: String,
    },
    /// The run ended.
    Result(RunResult),
}

/// Receives events. Implementations must be quick: the loop waits.
pub trait Observer: Send + Sync {
    /// Called for every event, in order.
    fn on_event(&self, event: &Event);
}

/// Ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Observer for Silent {
    fn on_event(&self, _event: &Event) {}
}
