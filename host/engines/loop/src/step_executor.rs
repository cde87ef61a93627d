//! The loop's steps that reach beyond the process (model calls and tool
//! calls) run through a [`StepExecutor`]. In process, the executor simply
//! runs them. A durable-execution engine journals each step's result under
//! its [`StepKey`], so that when a session's run starts over (its worker
//! was lost), finished steps hand back what they returned instead of
//! running twice; the loop is deterministic given those results, so it
//! arrives where it was.
//!
//! The loop knows no engine: it names its steps and hands them over.

use kaizen_llm::{CompletionsFuture, Usage};
use kaizen_protocol::StepKey;
use kaizen_tools::{ToolError, ToolOutput};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// What a tool step spent on models while it ran (its plugins'
/// completions, the sub-agent it started): it travels with the step's
/// result, so that a step handed back by a journal is charged as it was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Charged {
    /// The tokens.
    pub usage: Usage,
    /// The money, in USD.
    pub cost_usd: f64,
}

impl Charged {
    /// What `self` has that `here` has not: what a step charged that was
    /// not charged in this run (none when it ran here).
    pub fn beyond(&self, here: &Charged) -> Option<Charged> {
        let usage = self.usage.beyond(&here.usage);
        let cost_usd = (self.cost_usd - here.cost_usd).max(0.0);
        (usage != Usage::default() || cost_usd > 0.0).then_some(Charged { usage, cost_usd })
    }
}

/// A tool step's outcome: the call's result, and what it charged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolStepped {
    /// The call's result.
    pub result: Result<ToolOutput, ToolError>,
    /// What it spent on models while it ran.
    #[serde(default)]
    pub charged: Charged,
}

impl From<Result<ToolOutput, ToolError>> for ToolStepped {
    fn from(result: Result<ToolOutput, ToolError>) -> Self {
        Self {
            result,
            charged: Charged::default(),
        }
    }
}

/// A tool call's future.
pub type ToolStep<'a> = Pin<Box<dyn Future<Output = ToolStepped> + Send + 'a>>;

/// Runs the loop's steps.
pub trait StepExecutor: Send + Sync + fmt::Debug {
    /// Model call `key`: `call`'s outcome, or what an earlier run of the
    /// step returned.
    fn model<'a>(&'a self, key: StepKey, call: CompletionsFuture<'a>) -> CompletionsFuture<'a>;

    /// Tool call `key`: `call`'s result, or what an earlier run of the
    /// step returned.
    fn tool<'a>(&'a self, key: StepKey, call: ToolStep<'a>) -> ToolStep<'a>;
}

/// Runs every step as it comes, in this process: nothing is journaled
/// beyond the session's own log.
#[derive(Debug, Default, Clone, Copy)]
pub struct InProcess;

impl StepExecutor for InProcess {
    fn model<'a>(&'a self, _key: StepKey, call: CompletionsFuture<'a>) -> CompletionsFuture<'a> {
        call
    }

    fn tool<'a>(&'a self, _key: StepKey, call: ToolStep<'a>) -> ToolStep<'a> {
        call
    }
}
