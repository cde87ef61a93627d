//! One interface over agent runtimes.
//!
//! A [`RuntimeAdapter`] takes a task in an [`ExecutionContext`] (workspace,
//! model, limits, permission mode, extra instructions, MCP servers), reports
//! Kaizen's events while it works, and ends with Kaizen's result object, so
//! that a task can run on Kaizen's own loop or on another vendor's agent
//! and be compared, bounded and reported the same way.
//!
//! The external runtimes here are the vendors' CLIs, run as child
//! processes in their non-interactive JSON modes: Claude Code
//! (`claude-code`), Codex (`codex`) and Gemini CLI (`gemini-cli`). Each gets
//! a process group of its own (a timeout, a limit or an interrupt ends the
//! whole group) and an environment with nothing but the basics and its own
//! vendor's variables. Kaizen's own loop is an adapter of the embedding
//! program (kaizen-app's `OwnLoop`, over its front end's run), which
//! needs its plugins and sandbox.
//!
//! [`selector`] picks a runtime: the one asked for, or with `auto` those
//! that can do what the task needs, cheapest and fastest on their recent
//! [`History`] first, falling back to the next when one is missing or fails
//! before doing any work.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod adapter;
mod capabilities;
mod child;
mod claude_code;
mod codex;
mod external;
mod gemini;
mod gemini_home;
mod history;
mod normalize;
pub mod selector;
mod tree;

pub use adapter::{
    Availability, ExecuteFuture, Execution, ExecutionContext, Limits, McpServer, Resume,
    RuntimeAdapter, RuntimeError,
};
pub use capabilities::{CostReporting, RuntimeCapabilities, Vendor};
pub use external::ExternalRuntime;
pub use history::{History, PastRun, Record};
use kaizen_llm::PriceTable;
use std::path::Path;

/// The external runtimes, in the default order of preference, pricing
/// estimated costs with `prices` and keeping the files each run is given
/// in private directories under `scratch_root` (the system's temporary
/// directory when `None`).
pub fn external_runtimes(prices: &PriceTable, scratch_root: Option<&Path>) -> Vec<ExternalRuntime> {
    let clis: [Box<dyn external::Cli>; 3] = [
        Box::new(claude_code::ClaudeCode),
        Box::new(codex::Codex),
        Box::new(gemini::GeminiCli),
    ];
    clis.into_iter()
        .map(|cli| ExternalRuntime::new(cli, prices.clone(), scratch_root.map(Path::to_path_buf)))
        .collect()
}
