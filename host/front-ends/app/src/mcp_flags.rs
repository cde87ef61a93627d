//! `--mcp-config` and `--strict-mcp-config`, as Claude Code takes them:
//! MCP servers named on the command line (or in an Agent SDK's
//! handshake), among them the in-process servers of the program driving
//! the session.

use crate::mcp_config::McpServerEntry;
use crate::mcp_servers::{McpJson, McpJsonEntry, STARTUP_TIMEOUT, TOOL_TIMEOUT};
use kaizen_mcp::client::{EmbedderLink, EmbedderServer, ServerSpec, ToolFilter, Transport};
use std::sync::Arc;
use std::time::Duration;

/// `--mcp-config` and `--strict-mcp-config`, as Claude Code takes them,
/// and where the program driving the session serves its own servers.
#[derive(Clone, Default)]
pub struct McpFlags {
    /// Each a JSON object `{"mcpServers": {NAME: {...}}}`, or a file
    /// holding one.
    pub configs: Vec<String>,
    /// Only the servers of `configs`: none of the user's config or the
    /// workspace's `.mcp.json`.
    pub strict: bool,
    /// Where `"type": "sdk"` servers are reached: the program driving the
    /// session (an Agent SDK over stream-json input), when there is one.
    pub embedder: Option<Arc<dyn EmbedderLink>>,
    /// Servers the program driving the session serves, named in its
    /// handshake rather than in `configs`.
    pub embedded: Vec<String>,
}

/// Where `--mcp-config`'s servers say they come from.
pub const FLAG_ORIGIN: &str = "--mcp-config";

/// A server `--mcp-config` names.
pub(crate) enum FlagServer {
    /// One the user configures as in `[mcp_servers]`.
    Entry(McpServerEntry),
    /// One in the program driving the session.
    Embedded(ServerSpec),
}

/// The servers of `--mcp-config`: the user's own, as trusted as their
/// config; a `"type": "sdk"` one is the driving program's.
pub(crate) fn flag_servers(
    flags: &McpFlags,
    problems: &mut Vec<String>,
) -> Vec<(String, FlagServer)> {
    let mut entries: Vec<(String, McpJsonEntry)> = flags
        .embedded
        .iter()
        .map(|name| (name.clone(), McpJsonEntry::sdk()))
        .collect();
    for config in &flags.configs {
        let text = if config.trim_start().starts_with('{') {
            config.clone()
        } else {
            match std::fs::read_to_string(config) {
                Ok(text) => text,
                Err(err) => {
                    problems.push(format!("--mcp-config {config}: cannot be read: {err}"));
                    continue;
                }
            }
        };
        match serde_json::from_str::<McpJson>(&text) {
            Ok(file) => entries.extend(file.servers),
            Err(err) => problems.push(format!(
                "--mcp-config is not {{\"mcpServers\": {{...}}}}: {err}"
            )),
        }
    }
    let mut servers = Vec::new();
    for (name, entry) in entries {
        if entry.kind.as_deref() != Some("sdk") {
            let entry = McpServerEntry {
                command: entry.command,
                args: entry.args,
                env: entry.env,
                url: entry.url,
                ..McpServerEntry::default()
            };
            servers.push((name, FlagServer::Entry(entry)));
            continue;
        }
        match &flags.embedder {
            Some(link) => {
                let spec = embedded(&name, link);
                servers.push((name, FlagServer::Embedded(spec)));
            }
            None => problems.push(format!(
                "the MCP server `{name}` ({FLAG_ORIGIN}) is left out: it is served by the \
                 program driving the session (`type: sdk`), and no program drives this one \
                 (an Agent SDK does, over --input-format stream-json)"
            )),
        }
    }
    servers
}

/// The spec of a server in the driving program.
fn embedded(name: &str, link: &Arc<dyn EmbedderLink>) -> ServerSpec {
    ServerSpec {
        name: name.to_string(),
        origin: FLAG_ORIGIN.to_string(),
        transport: Transport::Embedder(EmbedderServer { link: link.clone() }),
        tools: ToolFilter::default(),
        startup_timeout: Duration::from_secs_f64(STARTUP_TIMEOUT),
        tool_timeout: Duration::from_secs_f64(TOOL_TIMEOUT),
    }
}

impl McpJsonEntry {
    /// A server in the program driving the session.
    fn sdk() -> Self {
        Self {
            kind: Some("sdk".into()),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_mcp::client::Exchange;

    /// A program that answers nothing (the specs are only built here).
    struct Silent;

    impl EmbedderLink for Silent {
        fn exchange(&self, _server: &str, _message: serde_json::Value) -> Exchange<'_> {
            Box::pin(async { Ok(None) })
        }
    }

    fn names(servers: &[(String, FlagServer)]) -> Vec<(&str, &str)> {
        servers
            .iter()
            .map(|(name, server)| match server {
                FlagServer::Entry(_) => (name.as_str(), "entry"),
                FlagServer::Embedded(_) => (name.as_str(), "embedded"),
            })
            .collect()
    }

    #[test]
    fn servers_come_from_json_files_and_the_handshake() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("servers.json");
        std::fs::write(
            &file,
            r#"{"mcpServers": {"remote": {"url": "https://mcp.example"}}}"#,
        )
        .unwrap();
        let mut flags = McpFlags {
            configs: vec![
                r#"{"mcpServers": {"files": {"command": "files-server", "args": ["."]}, "counter": {"type": "sdk", "name": "counter"}}}"#.into(),
                file.display().to_string(),
                "/no/such/servers.json".into(),
                "{not json".into(),
            ],
            embedded: vec!["notes".into()],
            ..McpFlags::default()
        };
        let mut problems = Vec::new();
        let servers = flag_servers(&flags, &mut problems);
        // Without a program driving the session, its servers are left out.
        assert_eq!(
            names(&servers),
            [("files", "entry"), ("remote", "entry")],
            "{problems:?}"
        );
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`counter`") && p.contains("type: sdk"))
        );
        assert!(problems.iter().any(|p| p.contains("/no/such/servers.json")));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("is not {\"mcpServers\""))
        );
        flags.embedder = Some(Arc::new(Silent));
        let mut problems = Vec::new();
        let servers = flag_servers(&flags, &mut problems);
        assert_eq!(
            names(&servers),
            [
                ("notes", "embedded"),
                ("counter", "embedded"),
                ("files", "entry"),
                ("remote", "entry")
            ]
        );
        let FlagServer::Entry(files) = &servers[2].1 else {
            unreachable!()
        };
        assert_eq!(files.command.as_deref(), Some("files-server"));
        assert_eq!(files.args, ["."]);
        let FlagServer::Embedded(spec) = &servers[0].1 else {
            unreachable!()
        };
        assert!(!spec.contained(dir.path()) && !spec.read_only());
    }
}
