//! Kaizen's learning memory: what sessions learned about the user (their
//! preferences, corrections) and about each project (facts, procedures),
//! kept in SQLite with full-text search under `KAIZEN_HOME`. A session
//! starts with the entries most relevant to its task in its system prompt
//! ([`recall`]); the model keeps and finds entries with the `Memory` tool
//! ([`MemoryTool`]).

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod recall;
mod store;
mod tool;

pub use recall::{Recalled, entry_line, recall};
pub use store::{
    Entry, Kind, MAX_TEXT, MemoryError, MemoryStore, Scope, now, project_identity, project_path,
};
pub use tool::MemoryTool;
