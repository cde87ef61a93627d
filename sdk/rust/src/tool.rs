//! The [`Tool`] trait and what goes with it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::{CallContext, Output, ToolError};

/// One tool a plugin provides.
///
/// A tool is a type without data: the host may create a fresh component
/// instance for every call, so anything that must outlive a call belongs in
/// a `static` (and the plugin's manifest should say `stateful = true`, which
/// makes the host keep one instance per session).
///
/// List every tool of the plugin in one [`export_tools!`](crate::export_tools)
/// invocation.
pub trait Tool {
    /// The name the model calls the tool by, e.g. `Greet`; unique across all
    /// loaded plugins, `[A-Za-z0-9_-]{1,64}`.
    const NAME: &'static str;

    /// What the tool does and when to use it, written for the model.
    const DESCRIPTION: &'static str;

    /// True when the tool never changes anything, so that several calls may
    /// run concurrently. Defaults to `false`.
    const READ_ONLY: bool = false;

    /// How much harm the tool can do. Defaults to [`Danger::Moderate`].
    const DANGER: Danger = Danger::Moderate;

    /// True for a tool only the plugin itself calls, through the host's
    /// `parallel` interface (one shard of a split-up job): it is left out
    /// of the tool list, so no model ever sees or calls it. Defaults to
    /// `false`.
    const INTERNAL: bool = false;

    /// The tool's input. Its JSON Schema (derived with
    /// `#[derive(JsonSchema)]`) is what the model sees; it must describe a
    /// JSON object, so use a struct with named fields (or [`NoInput`]). Doc
    /// comments on the fields become their descriptions.
    type Input: DeserializeOwned + JsonSchema;

    /// Runs the tool. The input already passed the schema check in the
    /// host; an `Err` is shown to the model, so say what went wrong and what
    /// to do next.
    fn call(ctx: &CallContext, input: Self::Input) -> Result<Output, ToolError>;
}

/// How much harm a tool can do; the host's permission rules use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Danger {
    /// Reads only; can never change anything.
    Safe,
    /// Changes files inside the granted directories.
    Moderate,
    /// Runs programs, reaches the network, or deletes data.
    Dangerous,
}

/// The input of a tool that takes no arguments: the empty JSON object `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct NoInput {}
