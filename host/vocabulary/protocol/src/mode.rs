//! Permission modes, by Claude Code's names.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How calls that no rule decides are treated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Read-only and safe tools run, and so do tools whose effects stay
    /// inside the session's grant (programs in the full OS sandbox without
    /// network, edits in the granted directories); anything else asks.
    #[default]
    Default,
    /// As `default`, and every tool that edits files runs without asking.
    AcceptEdits,
    /// Only read-only tools run: the model can look and plan, not act.
    Plan,
    /// Nothing asks: every call runs unless a deny or ask rule or a hook
    /// says otherwise (an ask rule still asks).
    BypassPermissions,
    /// Nothing asks: what would ask is refused.
    DontAsk,
}

impl PermissionMode {
    /// Every mode.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
        PermissionMode::DontAsk,
    ];

    /// The mode's name as Claude Code spells it (`acceptEdits`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }

    /// How much runs without asking: `plan` least, then `dontAsk`,
    /// `default`, `acceptEdits`, `bypassPermissions` most.
    fn reach(self) -> u8 {
        match self {
            PermissionMode::Plan => 0,
            PermissionMode::DontAsk => 1,
            PermissionMode::Default => 2,
            PermissionMode::AcceptEdits => 3,
            PermissionMode::BypassPermissions => 4,
        }
    }

    /// This mode, or `limit` when that lets less run without asking: a
    /// sub-agent's own mode never widens its session's.
    pub fn at_most(self, limit: PermissionMode) -> PermissionMode {
        if limit.reach() < self.reach() {
            limit
        } else {
            self
        }
    }

    /// The mode named `name`; an unknown name is an error listing them.
    pub fn parse(name: &str) -> Result<PermissionMode, String> {
        PermissionMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
                format!(
                    "unknown permission mode `{name}`; use one of: {}",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_only_ever_narrows_a_mode() {
        use PermissionMode::*;
        assert_eq!(BypassPermissions.at_most(Plan), Plan);
        assert_eq!(AcceptEdits.at_most(Default), Default);
        assert_eq!(Default.at_most(DontAsk), DontAsk);
        assert_eq!(Plan.at_most(BypassPermissions), Plan);
        assert_eq!(DontAsk.at_most(AcceptEdits), DontAsk);
        for mode in PermissionMode::ALL {
            assert_eq!(mode.at_most(mode), mode);
        }
    }
}
