//! `kaizen mcp serve`: the session's tools to MCP clients, on stdio or
//! over streamable HTTP.

use crate::PermissionArgs;
use crate::guard_setup;
use crate::plugins_cmd::{self, Selection};
use anyhow::Context as _;
use kaizen_mcp::{HttpOptions, ToolServer, serve_http, serve_stdio};
use kaizen_plugins::interaction::NoUser;
use kaizen_runtime::{DirectSession, Silent, new_session_id};
use kaizen_tools::ToolRegistry;
use std::net::SocketAddr;
use std::sync::Arc;

/// Serves every tool of the workspace's plugins over MCP: on stdin and
/// stdout as one kaizen session until the client closes the stream, or,
/// with `http`, at `http://ADDR/mcp`, one kaizen session per MCP session.
/// Nobody can be asked: a call that asks is refused with the rule or flag
/// that would allow it.
pub async fn serve(
    selection: &Selection,
    flags: &PermissionArgs,
    http: Option<SocketAddr>,
) -> anyhow::Result<()> {
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
    let plugins = Arc::new(plugins);
    let guard = Arc::new(guard.guard);
    let workspace = loaded.setup.workspace.clone();
    // Background shells and stateful instances end with their MCP session.
    let session = move || {
        let plugins = plugins.clone();
        let direct = DirectSession::new(new_session_id(), workspace.clone(), guard.clone());
        server(&tools, direct).on_end(Box::new(move |id| plugins.end_session(id)))
    };
    match http {
        None => serve_stdio(session()).await,
        Some(addr) => {
            let bearer = bearer_token(&loaded.setup.mcp.serve_token_env)?;
            let options = HttpOptions { addr, bearer };
            serve_http(session, options, |bound| {
                eprintln!("kaizen: serving MCP at http://{bound}/mcp");
            })
            .await
        }
    }
}

fn server(tools: &Arc<ToolRegistry>, session: DirectSession) -> ToolServer {
    ToolServer::new(tools.clone(), Arc::new(session), Arc::new(Silent))
}

/// The token HTTP clients must present: the value of the variable the
/// user's `[mcp] serve-token-env` names, if it does.
fn bearer_token(variable: &Option<String>) -> anyhow::Result<Option<String>> {
    let Some(name) = variable else {
        return Ok(None);
    };
    let token = std::env::var(name)
        .with_context(|| format!("[mcp] serve-token-env names {name}, which is not set"))?;
    anyhow::ensure!(
        !token.is_empty(),
        "{name} (the MCP server's token) is empty"
    );
    Ok(Some(token))
}
