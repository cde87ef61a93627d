//! Kaizen's agent loop.
//!
//! Think → act → observe → decide, until a model response carries no tool
//! calls, bounded by cycles, budget, wall clock and interrupts. The loop
//! sees models through [`kaizen_llm::Provider`] and tools through
//! [`kaizen_tools::ToolRegistry`]; it knows nothing of wasmtime or of where
//! a tool came from. Sessions persist through [`kaizen_session_store`]: the
//! loop tells a [`Journal`] each change, and a [`SessionRecorder`] keeps
//! them as a log and checkpoints that [`restore`] reads back.
//! Its vocabulary (events, results, approvals, step keys) is
//! [`kaizen_protocol`]'s and its rules are [`kaizen_permissions`]'.

mod act;
mod act_phase;
mod admit;
mod agent;
mod agent_config;
mod bounded;
mod checkpoint_writer;
mod compaction;
mod completions;
mod context;
mod direct;
mod guard;
mod hook_points;
mod hooks;
mod inbox;
mod journal;
mod planner_driver;
mod prompt;
mod recorder;
mod run_start;
mod state;
mod steps;
mod sub_agent;
mod think;

pub use agent::{Agent, Pricing};
pub use agent_config::{
    AgentConfig, DEFAULT_BUDGET_USD, DEFAULT_INTERRUPT_GRACE, DEFAULT_MAX_CYCLES,
    DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_TOKENS,
};
pub use completions::{
    DEFAULT_BUDGET_SHARE, DEFAULT_MAX_CALLS, ModelRoles, PluginLlmCaps, PluginLlmPolicy,
};
pub use context::{ContextPolicy, DEFAULT_ELIDE_OVER, DEFAULT_KEEP_RECENT, DEFAULT_THRESHOLD};
pub use direct::DirectSession;
pub use guard::{DEFAULT_MAX_STOP_CONTINUATIONS, Guard};
pub use hooks::{DEFAULT_HOOK_TIMEOUT, Dispatch, HookDispatcher, HookReport};
pub use inbox::Inbox;
pub use journal::{Entry, Journal, lost_results};
pub use planner_driver::{DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_REVISIONS, PlannerSetup};
pub use prompt::{INSTRUCTION_FILES, system_prompt, today};
pub use recorder::{
    CheckpointPolicy, LogRecord, Restored, SessionRecorder, restore, restore_at, rewind_log,
};
pub use state::{FileRecord, SessionState, new_session_id};
pub use steps::{Charged, InProcess, StepExecutor, ToolStep, ToolStepped};
pub use sub_agent::TASK_TOOL;
