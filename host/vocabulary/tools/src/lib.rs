//! What a tool is to Kaizen, wherever it comes from.
//!
//! A [`Tool`] may be backed by a WebAssembly component or a test (MCP
//! servers will be another source); the agent loop sees only this crate.
//! The [`ToolRegistry`] merges the tools of every source, validates each call's arguments against the tool's
//! JSON Schema before the tool runs, and turns every failure into a
//! [`ToolError`] whose message a model can act on. Each call's
//! [`CallContext`] carries the session's [`SessionNotes`] (files read, the
//! todo list), which tools share and the loop keeps in its session state,
//! a [`SubAgentLink`] through which a tool can hand work to a sub-agent,
//! and a [`CompletionLink`] to the session's model.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod completion;
mod history;
mod registry;
mod session;
mod spec;
mod sub_agent;

pub use completion::{
    Completion, CompletionError, CompletionFuture, CompletionLink, CompletionRequest, Completions,
    MODEL_ROLES, PromptMessage,
};
pub use history::{FileHistory, FileHistoryLink};
pub use registry::{DEFAULT_MAX_OUTPUT_BYTES, RegistryError, ToolRegistry};
pub use session::{ActiveSkill, FileRecord, NoteChanges, Notes, SessionNotes};
pub use spec::{
    CallContext, ContentPart, Danger, RuleSubject, SubjectKind, Tool, ToolError, ToolErrorKind,
    ToolFuture, ToolOutput, ToolSpec,
};
pub use sub_agent::{SubAgentFuture, SubAgentLink, SubAgentReport, SubAgentRequest, SubAgents};
