//! `kaizen mcp serve`: the session's tools to an MCP client on stdio.

use crate::PermissionArgs;
use crate::guard_setup;
use crate::plugins_cmd::{self, Selection};
use kaizen_mcp::{ToolServer, serve_stdio};
use kaizen_plugins::interaction::NoUser;
use kaizen_runtime::{DirectSession, Silent, new_session_id};
use std::sync::Arc;

/// Serves every tool of the workspace's plugins over MCP on stdin and
/// stdout, as one kaizen session, until the client closes the stream.
/// Nobody can be asked (stdin is the protocol): a call that asks is
/// refused with the rule or flag that would allow it.
pub async fn serve(selection: &Selection, flags: &PermissionArgs) -> anyhow::Result<()> {
    let loaded = plugins_cmd::load_with(selection, Arc::new(NoUser), None, flags, true).await?;
    for failure in &loaded.plugins.failed {
        tracing::warn!("{}", failure.summary());
    }
    let guard = guard_setup::build(&loaded.setup, loaded.permissions, &loaded.plugins, None)?;
    for note in &guard.notes {
        eprintln!("kaizen: {note}");
    }
    let mut plugins = loaded.plugins;
    let tools = Arc::new(std::mem::take(&mut plugins.registry));
    let session_id = new_session_id();
    let session = Arc::new(DirectSession::new(
        session_id.clone(),
        loaded.setup.workspace.clone(),
        Arc::new(guard.guard),
    ));
    let served = serve_stdio(ToolServer::new(tools, session, Arc::new(Silent))).await;
    // Background shells and stateful instances end with the MCP session.
    plugins.end_session(&session_id);
    served
}
