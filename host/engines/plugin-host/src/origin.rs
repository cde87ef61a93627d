//! Where a plugin was found. Grants depend on it (a workspace's own
//! plugins get less by default), so it sits below both the capabilities
//! and discovery.

use serde::Serialize;
use std::fmt;

/// Where a plugin was found; listings show it, and later origins cannot
/// replace a plugin of the same name from an earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Shipped inside the `kaizen` binary.
    Builtin,
    /// `$KAIZEN_HOME/plugins`.
    User,
    /// `.kaizen/plugins` in the workspace.
    Workspace,
    /// A `--plugins DIR` flag.
    Flag,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Builtin => "builtin",
            Self::User => "user",
            Self::Workspace => "workspace",
            Self::Flag => "flag",
        })
    }
}
