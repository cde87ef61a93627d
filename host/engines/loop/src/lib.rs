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
//!
//! # How the loop is built
//!
//! An [`Agent`] holds the collaborators and the [`AgentConfig`]; each run
//! builds a `Turn` (`turn.rs`): what its stages share (the collaborators
//! by reference, the limits and strategies, the scope of spending and
//! deadline, the interrupt, the session's state). The driver (`run.rs`)
//! calls the stages (`stages/`) in order, each a function of the turn:
//! the user's messages in, compaction, the planner's shaping, THINK, the
//! Stop hooks, ACT and OBSERVE. While a step runs, the sub-agents and
//! plugin completions its calls ask for are served beside it (`serve.rs`).
//! Every hook event fires through `hook_points.rs`; tool calls pass the
//! guard in `admit.rs`. The session changes only by journal entries
//! (`session_journal.rs`), applied and recorded by the turn.
//!
//! A sub-agent's run is a run: the sub-agent stage calls the driver. The
//! driver's stages reach it only through a function the outermost run's
//! turn is given (`turn::Delegate`), so no file imports one that imports
//! it back.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod admit;
mod agent;
mod agent_config;
mod bounded;
mod calls;
mod checkpoint_writer;
mod commit;
mod context;
mod direct;
mod guard;
mod hook_points;
mod hooks;
mod inbox;
mod links;
mod model_roles;
mod planner_setup;
mod plugin_llm;
mod pricing;
mod prompt;
mod recorder;
mod results;
mod run;
mod run_start;
mod scope;
mod serve;
mod session_journal;
mod stages;
mod state;
mod step_executor;
mod tool_calls;
mod turn;

pub use agent::Agent;
pub use agent_config::{
    AgentConfig, AgentType, DEFAULT_BUDGET_USD, DEFAULT_INTERRUPT_GRACE, DEFAULT_MAX_CYCLES,
    DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_TOKENS,
};
pub use context::{ContextPolicy, DEFAULT_ELIDE_OVER, DEFAULT_KEEP_RECENT, DEFAULT_THRESHOLD};
pub use direct::DirectSession;
pub use guard::{DEFAULT_MAX_STOP_CONTINUATIONS, Guard};
pub use hooks::{DEFAULT_HOOK_TIMEOUT, Dispatch, HookDispatcher, HookReport};
pub use inbox::Inbox;
pub use model_roles::ModelRoles;
pub use planner_setup::{DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_REVISIONS, PlannerSetup};
pub use plugin_llm::{DEFAULT_BUDGET_SHARE, DEFAULT_MAX_CALLS, PluginLlmCaps, PluginLlmPolicy};
pub use pricing::Pricing;
pub use prompt::{INSTRUCTION_FILES, system_prompt, today};
pub use recorder::{
    CheckpointPolicy, LogRecord, Restored, SessionRecorder, restore, restore_at, rewind_log,
};
pub use session_journal::{Entry, Journal, lost_results};
pub use stages::sub_agent::TASK_TOOL;
pub use state::{FileRecord, SessionState, new_session_id};
pub use step_executor::{Charged, InProcess, StepExecutor, ToolStep, ToolStepped};
