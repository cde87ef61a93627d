//! `kaizen mcp serve`: the session's tools to MCP clients, on stdio or
//! over streamable HTTP; `kaizen mcp list`: the MCP servers a run uses.

use crate::PermissionArgs;
use anyhow::Context as _;
use kaizen_app::mcp_servers;
use kaizen_app::plugin_loading::Selection;
use kaizen_app::session_builder::{Collaborators, ToolSession, tool_session};
use kaizen_mcp::client::{McpServer, McpTool, ServerState, Transport, start_all};
use kaizen_mcp::{HttpOptions, ToolServer, serve_http, serve_stdio};
use kaizen_protocol::Silent;
use kaizen_runtime::{DirectSession, new_session_id};
use kaizen_tools::ToolRegistry;
use serde_json::{Value, json};
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
    let ToolSession {
        setup,
        mut plugins,
        guard,
    } = tool_session(selection, flags, Collaborators::nobody())
        .await
        .map_err(|failure| failure.error)?;
    let tools = Arc::new(std::mem::take(&mut plugins.registry));
    let plugins = Arc::new(plugins);
    let workspace = setup.workspace.clone();
    // Background shells and stateful instances end with their MCP session.
    let session = move || {
        let plugins = plugins.clone();
        let direct = DirectSession::new(new_session_id(), workspace.clone(), guard.clone());
        server(&tools, direct).on_end(Box::new(move |id| plugins.end_session(id)))
    };
    match http {
        None => serve_stdio(session()).await,
        Some(addr) => {
            let bearer = bearer_token(&setup.mcp.serve_token_env)?;
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

/// `kaizen mcp list`: starts the MCP servers a run would use and shows
/// each one's state, grant and tools, or why it is left out.
pub async fn list(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let (setup, host, _plugins) = kaizen_app::plugin_loading::load(selection).await?;
    let configured = mcp_servers::configured(&setup, host.sandbox());
    let servers = start_all(configured.specs, &setup.workspace).await;
    let listed: Vec<Value> = servers.iter().map(describe).collect();
    if json {
        let out = json!({"servers": listed, "problems": configured.problems});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if servers.is_empty() && configured.problems.is_empty() {
        println!(
            "No MCP servers are configured: add [mcp_servers.NAME] to your config.toml, or a \
             trusted workspace's .mcp.json."
        );
    }
    for server in &listed {
        print!("{}", text(server));
    }
    for problem in &configured.problems {
        println!("left out: {problem}");
    }
    Ok(())
}

/// One server as `kaizen mcp list --json` shows it.
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
    }
    out
}

/// The text form of [`describe`]'s value.
fn text(server: &Value) -> String {
    let list = |value: &Value| {
        let items: Vec<String> = value
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| item.as_str().unwrap_or_default().to_string())
            .collect();
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let mut out = format!(
        "{} ({}): {}\n",
        server["name"].as_str().unwrap_or_default(),
        server["origin"].as_str().unwrap_or_default(),
        server["state"].as_str().unwrap_or_default(),
    );
    if let Some(url) = server["url"].as_str() {
        let token = match server["bearer_token"] == true {
            true => " (with a bearer token)",
            false => "",
        };
        out.push_str(&format!("  url: {url}{token}\n"));
    } else {
        out.push_str(&format!(
            "  command: {} {}\n",
            server["command"].as_str().unwrap_or_default(),
            list(&server["args"]).replace(", ", " "),
        ));
        let grant = &server["grant"];
        let network = if grant["network"] == true {
            "yes"
        } else {
            "no"
        };
        out.push_str(&format!(
            "  grant: write {}; read {}; network {network}\n",
            list(&grant["write"]),
            list(&grant["read"]),
        ));
    }
    if let Some(why) = server["why"].as_str() {
        out.push_str(&format!("  why: {why}\n"));
    }
    let names: Vec<Value> = server["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| tool["name"].clone())
        .collect();
    out.push_str(&format!("  tools: {}\n", list(&Value::Array(names))));
    for note in server["notes"].as_array().into_iter().flatten() {
        out.push_str(&format!("  note: {}\n", note.as_str().unwrap_or_default()));
    }
    out
}
