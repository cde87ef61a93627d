//! `kaizen mcp serve`: the session's tools to MCP clients, on stdio or
//! over streamable HTTP ([`kaizen_app::mcp_serve`]); `kaizen mcp list`:
//! the MCP servers a run uses ([`kaizen_app::mcp_list`]).

use crate::PermissionArgs;
use kaizen_app::plugin_loading::Selection;
use kaizen_app::{mcp_list, mcp_serve};
use serde_json::{Value, json};
use std::net::SocketAddr;

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
    mcp_serve::serve(
        selection,
        flags,
        crate::answerers::to_stderr(),
        http,
        |bound| {
            eprintln!("kaizen: serving MCP at http://{bound}/mcp");
        },
    )
    .await
    .map_err(|failure| failure.error)
}

/// `kaizen mcp list`: starts the MCP servers a run would use and shows
/// each one's state, grant and tools, or why it is left out.
pub async fn list(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let listing = mcp_list::list(selection, &crate::answerers::to_stderr()).await?;
    if json {
        let out = json!({"servers": listing.servers, "problems": listing.problems});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if listing.servers.is_empty() && listing.problems.is_empty() {
        println!(
            "No MCP servers are configured: add [mcp_servers.NAME] to your config.toml, or a \
             trusted workspace's .mcp.json."
        );
    }
    for server in &listing.servers {
        print!("{}", text(server));
    }
    for problem in &listing.problems {
        println!("left out: {problem}");
    }
    Ok(())
}

/// The text form of one server of [`kaizen_app::mcp_list`]'s listing.
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
