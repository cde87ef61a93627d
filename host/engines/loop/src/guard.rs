//! What decides each tool call and watches the session: the permission
//! rules and mode, the hooks, and who approves. One [`Guard`] serves a
//! session and its sub-agents, so hooks and rules see every call.

use crate::hooks::HookDispatcher;
use kaizen_permissions::Permissions;
use kaizen_protocol::Approver;
use std::sync::Arc;

/// How many times in a row Stop hooks may send the loop back to work
/// (Claude Code's cap), so that a hook that never lets go cannot spend the
/// budget on its own.
pub const DEFAULT_MAX_STOP_CONTINUATIONS: u32 = 8;

/// The decision pipeline of a session's tool calls: rules and mode, then
/// `PreToolUse` hooks, then the user if it is still an ask; the tool runs;
/// then `PostToolUse` hooks.
pub struct Guard {
    /// The rules and the mode.
    pub permissions: Permissions,
    /// Every hook of the session.
    pub hooks: HookDispatcher,
    /// Who is asked; without one, a call that asks is refused with a
    /// message naming what would allow it.
    pub approver: Option<Arc<dyn Approver>>,
    /// How many times in a row Stop hooks may keep the loop going.
    pub max_stop_continuations: u32,
}

impl Guard {
    /// A guard of `permissions` and `hooks`, asking `approver`.
    pub fn new(
        permissions: Permissions,
        hooks: HookDispatcher,
        approver: Option<Arc<dyn Approver>>,
    ) -> Self {
        Self {
            permissions,
            hooks,
            approver,
            max_stop_continuations: DEFAULT_MAX_STOP_CONTINUATIONS,
        }
    }

    /// No rules, no hooks, every call allowed: for embedders and tests
    /// that check nothing.
    pub fn allow_all() -> Self {
        Self::new(Permissions::allow_all(), HookDispatcher::default(), None)
    }
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("permissions", &self.permissions)
            .field("hooks", &self.hooks)
            .field("approver", &self.approver.is_some())
            .finish()
    }
}
