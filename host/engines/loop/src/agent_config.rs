//! How a run is bounded and where it works, with the defaults: what it
//! is (model, workspace, instructions), its limits, and its strategies
//! (model roles, plugins' completions, planner, context policy, inbox,
//! step executor). The fields are flat because embedders set them one by
//! one (`config.max_cycles = ..`); the stages read them from the config
//! their turn holds.

use crate::context::ContextPolicy;
use crate::inbox::Inbox;
use crate::model_roles::ModelRoles;
use crate::planner_setup::PlannerSetup;
use crate::plugin_llm::PluginLlmPolicy;
use crate::step_executor::{InProcess, StepExecutor};
use kaizen_protocol::PermissionMode;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Default cap on model calls per run.
pub const DEFAULT_MAX_CYCLES: u32 = 50;
/// Default budget per run, in USD.
pub const DEFAULT_BUDGET_USD: f64 = 5.0;
/// Default cap on output tokens per model call.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;
/// Default time running tool calls get to finish after an interrupt.
pub const DEFAULT_INTERRUPT_GRACE: Duration = Duration::from_secs(10);
/// Default cap on the characters of one tool result the model sees: a
/// safety net well above the tools' own bounds (Read's 100 KiB window,
/// WebFetch's 100,000 characters, Bash's and Grep's 30,000), so that it
/// never cuts what a tool already sized for the model.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 200_000;

/// How a run is bounded and where it works.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    // What the run is.
    /// The model to call.
    pub model: String,
    /// The workspace (tools' working directory).
    pub workspace: PathBuf,
    // Its limits.
    /// Most model calls in this run.
    pub max_cycles: u32,
    /// Most USD this run may spend.
    pub budget_usd: f64,
    /// Wall-clock limit of this run.
    pub timeout: Option<Duration>,
    /// Output token cap per model call.
    pub max_tokens: u32,
    /// Characters of one tool result the model sees.
    pub max_result_chars: usize,
    /// After an interrupt, how long running tool calls may take to finish
    /// before they are cut off (a model call is cut at once).
    pub interrupt_grace: Duration,
    // What it tells the model and its hooks.
    /// Replaces Kaizen's own system prompt (who the agent is, where it
    /// works, the project's instruction files): an embedder's
    /// `--system-prompt`. Sub-agents keep Kaizen's.
    pub system_prompt: Option<String>,
    /// Added to the end of the system prompt (a sub-agent's role, an
    /// embedder's rules).
    pub instructions: Option<String>,
    /// The session's log, for hooks' `transcript_path`.
    pub transcript_path: Option<PathBuf>,
    // Its strategies.
    /// Which model plays each role (`sub-agent`, and the roles plugins'
    /// completions ask for).
    pub models: ModelRoles,
    /// The operator's caps on plugins' completions.
    pub plugin_llm: PluginLlmPolicy,
    /// The planner that shapes the run's THINK steps (not its
    /// sub-agents'); none for plain ReAct.
    pub planner: Option<PlannerSetup>,
    /// When the conversation is compacted to fit the model's window.
    pub context: ContextPolicy,
    /// Messages from outside the run, taken before each model call (not
    /// by sub-agents).
    pub inbox: Option<Inbox>,
    /// How model and tool calls run: in process, or journaled by a
    /// durable-execution engine (see [`crate::StepExecutor`]).
    pub steps: Arc<dyn StepExecutor>,
    /// Sub-agent types beyond the built-in ones (`general-purpose`,
    /// `Explore`), by the `subagent_type` a tool names.
    pub agent_types: Vec<AgentType>,
    /// A sub-agent's own permission mode (its type's): its calls are
    /// judged under the stricter of it and the session's. `None` for the
    /// session's own runs.
    pub permission_mode: Option<PermissionMode>,
}

/// A kind of sub-agent the user defined (Claude Code's agent files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentType {
    /// What `subagent_type` names it by.
    pub name: String,
    /// When to use it, for the model choosing one.
    pub description: String,
    /// The tools it is offered, by name; `None`: all of the session's
    /// (never the one that starts sub-agents, nor tools the session's
    /// rules deny).
    pub tools: Option<Vec<String>>,
    /// Its instructions, added to the system prompt.
    pub instructions: String,
    /// Its own permission mode: its calls are judged under the stricter
    /// of it and the session's (`None`: the session's).
    pub permission_mode: Option<PermissionMode>,
}

impl AgentConfig {
    /// Defaults for `model` in `workspace`.
    pub fn new(model: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            workspace: workspace.into(),
            max_cycles: DEFAULT_MAX_CYCLES,
            budget_usd: DEFAULT_BUDGET_USD,
            timeout: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            interrupt_grace: DEFAULT_INTERRUPT_GRACE,
            system_prompt: None,
            instructions: None,
            transcript_path: None,
            models: ModelRoles::default(),
            plugin_llm: PluginLlmPolicy::default(),
            planner: None,
            context: ContextPolicy::default(),
            inbox: None,
            steps: Arc::new(InProcess),
            agent_types: Vec::new(),
            permission_mode: None,
        }
    }
}
