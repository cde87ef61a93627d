//! What a store keeps for the call it serves ([`CallState`]), and what a
//! call brings to it ([`CallSetup`]). A stateful instance serves many
//! calls: each sees its own directory, notes, links and sandbox.

use crate::caps::{CapStates, HostCapability, LoadedCaps, Slot};
use crate::runtime::PluginRuntime;
use kaizen_tools::{CallContext, CompletionLink, FileHistoryLink, SessionNotes};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

/// What one call brings to the store that serves it. What a call does not
/// bring (a hook's event has no tool call) stays as the store had it.
pub(crate) struct CallSetup<'a> {
    /// The tool call, for a call of one of the plugin's tools.
    pub tool: Option<&'a CallContext>,
    /// The plugin, when the call may fan out through `parallel` (a tool
    /// call not itself made that way).
    pub fan_out: Option<&'a Weak<PluginRuntime>>,
    /// Where the call's completions go.
    pub completions: &'a CompletionLink,
    /// The session's notes, when the call brings them.
    pub notes: Option<&'a Arc<SessionNotes>>,
}

impl<'a> CallSetup<'a> {
    /// A call of a tool; `fan_out` when it may fan out.
    pub fn tool(ctx: &'a CallContext, fan_out: Option<&'a Weak<PluginRuntime>>) -> Self {
        Self {
            tool: Some(ctx),
            fan_out,
            completions: &ctx.completions,
            notes: Some(&ctx.notes),
        }
    }

    /// An event for a hook.
    pub fn hook(completions: &'a CompletionLink) -> Self {
        Self {
            tool: None,
            fan_out: None,
            completions,
            notes: None,
        }
    }

    /// A call of a planner, with a copy of the session's notes.
    pub fn planner(completions: &'a CompletionLink, notes: &'a Arc<SessionNotes>) -> Self {
        Self {
            tool: None,
            fan_out: None,
            completions,
            notes: Some(notes),
        }
    }
}

/// The per-call part of a plugin's store: what the always-linked `session`
/// interface serves and each capability's own part.
pub(crate) struct CallState {
    /// The model's id for the current tool call.
    pub id: String,
    /// The directory the current call works in.
    pub cwd: Option<PathBuf>,
    /// The notes of the session whose call the store serves.
    pub notes: Arc<SessionNotes>,
    /// Where files are kept before the current call changes them.
    pub history: FileHistoryLink,
    caps: CapStates,
}

impl CallState {
    /// The state of a new store whose first call works in `cwd`.
    pub fn new(caps: CapStates, cwd: Option<&Path>) -> Self {
        Self {
            id: String::new(),
            cwd: cwd.map(Path::to_path_buf),
            notes: Arc::default(),
            history: FileHistoryLink::default(),
            caps,
        }
    }

    /// Takes in what `call` brings.
    pub fn begin(&mut self, loaded: &LoadedCaps, call: &CallSetup<'_>) {
        if let Some(ctx) = call.tool {
            self.id.clone_from(&ctx.call_id);
            self.cwd = Some(ctx.cwd.clone());
            self.history = ctx.history.clone();
        }
        if let Some(notes) = call.notes {
            self.notes = notes.clone();
        }
        self.caps.begin_call(loaded, call);
    }

    /// What the capabilities refused during the call (taken: the next
    /// call starts with none).
    pub fn take_refusals(&self) -> Vec<String> {
        self.caps.take_refusals()
    }

    /// Capability `C`'s part.
    pub fn get<C: HostCapability>(&self) -> &C::State
    where
        CapStates: Slot<C>,
    {
        Slot::<C>::slot(&self.caps)
    }

    /// Capability `C`'s part, to change.
    pub fn get_mut<C: HostCapability>(&mut self) -> &mut C::State
    where
        CapStates: Slot<C>,
    {
        Slot::<C>::slot_mut(&mut self.caps)
    }
}
