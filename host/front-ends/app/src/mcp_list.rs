//! What `kaizen mcp list` shows: the MCP servers a run would use, started,
//! each with its state, grant and tools, and the ones left out with why.

use crate::mcp_servers;
use crate::notices::Notices;
use crate::plugin_loading::{self, Selection};
use kaizen_mcp::client::{McpServer, McpTool, ServerState, Transport, start_all};
use serde_json::{Value, json};
use std::sync::Arc;

/// The MCP servers of a workspace, as `kaizen mcp list --json` prints
/// them.
pub struct McpListing {
    /// Each server started: its name, origin, state, grant and tools.
    pub servers: Vec<Value>,
    /// Configured servers left out, each with why.
    pub problems: Vec<String>,
}

/// Starts the MCP servers a run in `selection`'s workspace would use and
/// describes each; what of the configuration did not apply is told to
/// `notices`.
pub async fn list(selection: &Selection, notices: &Notices) -> anyhow::Result<McpListing> {
    let (setup, host, _plugins) = plugin_loading::load(selection, notices).await?;
    let configured = mcp_servers::configured(&setup, host.sandbox(), &selection.mcp);
    let servers = start_all(configured.specs, &setup.workspace).await;
    Ok(McpListing {
        servers: servers.iter().map(describe).collect(),
        problems: configured.problems,
    })
}

/// One server: its name, origin, state (and why, when not running),
/// program or URL, grant and tools.
fn describe(server: &Arc<McpServer>) -> Value {
    let spec = server.spec();
    let (state, why) = match server.state() {
        ServerState::Running => ("running", None),
        ServerState::Restarted(why) => ("restarted", Some(why)),
        ServerState::Failed(why) => ("failed", Some(why)),
    };
    let (tools, notes) = McpTool::all(server);
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            json!({"name": spec.name, "description": spec.description, "read_only": spec.read_only})
        })
        .collect();
    let mut out = json!({
        "name": spec.name,
        "origin": spec.origin,
        "state": state,
        "why": why,
        "server": server.server_info().map(|info| json!({"name": info.name, "version": info.version})),
        "contained": server.contained(),
        "tools": tools,
        "notes": notes,
    });
    match &spec.transport {
        Transport::Stdio(stdio) => {
            out["command"] = json!(stdio.program);
            out["args"] = json!(stdio.args);
            out["grant"] = json!({
                "write": stdio.policy.writable,
                "read": stdio.policy.readable,
                "network": stdio.policy.network,
            });
        }
        // The token is the host's: only whether there is one is shown.
        Transport::Http(http) => {
            out["url"] = json!(http.url);
            out["bearer_token"] = json!(http.bearer.is_some());
        }
        Transport::Embedder(_) => out["in"] = json!("the program driving the session"),
    }
    out
}
