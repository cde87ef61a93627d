//! The `[mcp_servers]` table of the user's config: the MCP servers whose
//! tools sessions use.

use crate::section::{self, Section};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One `[mcp_servers.NAME]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerEntry {
    /// The program that runs the server on stdio.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables passed on from kaizen's own environment (never a
    /// provider key).
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// Its working directory (relative to the workspace).
    pub cwd: Option<PathBuf>,
    /// A remote server's address.
    pub url: Option<String>,
    /// The variable holding a remote server's bearer token.
    pub bearer_token_env_var: Option<String>,
    /// Headers sent to a remote server with every request.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// `false` leaves it out.
    pub enabled: Option<bool>,
    /// A run fails when this server cannot start.
    #[serde(default)]
    pub required: bool,
    /// Only these tools.
    pub enabled_tools: Option<Vec<String>>,
    /// Never these tools.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Seconds it may take to start (default 10).
    pub startup_timeout_sec: Option<f64>,
    /// Seconds one call may take (default 60).
    pub tool_timeout_sec: Option<f64>,
    /// Directories it may read besides the system's (`~` and paths
    /// relative to the workspace allowed).
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Directories it may write; the workspace when left out.
    pub write: Option<Vec<PathBuf>>,
    /// Whether it may use the network (default false).
    #[serde(default)]
    pub network: bool,
}

/// `[mcp_servers]`: a workspace names its servers in `.mcp.json`, which
/// its trust governs, not in `kaizen.toml`.
impl Section for BTreeMap<String, McpServerEntry> {
    const KEY: &'static str = "[mcp_servers]";
    const SCOPE: section::Scope = section::Scope::User(
        "MCP servers are set in the user's config, or in the workspace's .mcp.json",
    );

    fn is_set(&self) -> bool {
        !self.is_empty()
    }

    fn merge(&mut self, over: Self) {
        self.extend(over);
    }
}
