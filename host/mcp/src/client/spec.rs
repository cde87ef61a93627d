//! What the host says about one MCP server: how to start it, what it may
//! touch, which of its tools to use, and how long to wait.

use std::path::PathBuf;
use std::time::Duration;

/// How to start one stdio MCP server, and its sandbox.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The server's name: the `<server>` of `mcp__<server>__<tool>`.
    pub name: String,
    /// Where it was configured (`config.toml`, `.mcp.json`), for messages.
    pub origin: String,
    /// The program, looked up on the sandbox's `PATH`, or a path.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables over the sandbox's safe set (already screened by the
    /// caller: no provider key is among them).
    pub env: Vec<(String, String)>,
    /// Its working directory; the workspace when `None`.
    pub cwd: Option<PathBuf>,
    /// The OS sandbox it runs in: its directories, network and limits.
    pub policy: kaizen_sandbox::Policy,
    /// Which of its tools to offer.
    pub tools: ToolFilter,
    /// How long it may take to start and list its tools.
    pub startup_timeout: Duration,
    /// How long one call may take.
    pub tool_timeout: Duration,
}

impl ServerSpec {
    /// Whether everything the server can do stays inside the session's
    /// grant: no network, no directory beyond `workspace`, the full OS
    /// sandbox.
    pub fn contained(&self, workspace: &std::path::Path) -> bool {
        !self.policy.network
            && !self.policy.allow_degraded
            && self
                .policy
                .writable
                .iter()
                .all(|dir| dir.starts_with(workspace))
    }

    /// Whether its tools can change nothing: it may write no directory
    /// and use no network.
    pub fn read_only(&self) -> bool {
        !self.policy.network && self.policy.writable.is_empty()
    }
}

/// Which tools of a server to offer (Codex's `enabled_tools` and
/// `disabled_tools`).
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// Only these, when set.
    pub enabled: Option<Vec<String>>,
    /// Never these.
    pub disabled: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool the server calls `name` is offered.
    pub fn allows(&self, name: &str) -> bool {
        self.enabled
            .as_ref()
            .is_none_or(|enabled| enabled.iter().any(|n| n == name))
            && !self.disabled.iter().any(|n| n == name)
    }
}
