//! MCP servers a session uses as tools: `[mcp_servers.NAME]` of the
//! user's config (Codex's keys, plus each server's sandbox grant), in a
//! trusted workspace Claude Code's `.mcp.json`, and those `--mcp-config`
//! names (among them the in-process servers of an Agent SDK driving the
//! session). Each becomes a
//! [`ServerSpec`]: the program, its grant as an OS sandbox policy, its tool
//! filter and timeouts.

use crate::config::Setup;
use crate::mcp_config::McpServerEntry;
use crate::mcp_flags::{FlagServer, McpFlags, flag_servers};
use crate::notices::Notices;
use crate::section::{absolute, expand_home};
use crate::session::PROVIDER_KEYS;
use crate::trust::TrustStatus;
use kaizen_mcp::client::{
    HttpServer, McpServer, McpTool, ServerSpec, ServerState, StdioServer, ToolFilter, Transport,
    start_all,
};
use kaizen_sandbox::{Containment, Scope};
use kaizen_tools::ToolRegistry;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Claude Code's project file of MCP servers, at the workspace root.
pub const MCP_JSON: &str = ".mcp.json";

/// Seconds a server may take to start when its entry does not say.
pub(crate) const STARTUP_TIMEOUT: f64 = 10.0;
/// Seconds one call may take when the entry does not say.
pub(crate) const TOOL_TIMEOUT: f64 = 60.0;

/// `.mcp.json`: `{"mcpServers": {NAME: {...}}}`.
#[derive(Debug, Deserialize)]
pub(crate) struct McpJson {
    #[serde(rename = "mcpServers", default)]
    pub servers: BTreeMap<String, McpJsonEntry>,
}

/// One server of `.mcp.json`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct McpJsonEntry {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
}

/// A server kaizen will start, or why it will not.
pub struct Configured {
    /// The servers to start.
    pub specs: Vec<ServerSpec>,
    /// The names of those whose failure fails a run.
    pub required: Vec<String>,
    /// Entries left out, and why.
    pub problems: Vec<String>,
}

/// The servers of the user's config and, when the workspace is trusted,
/// of its `.mcp.json` (the user's entry wins on a shared name), unless
/// `--strict-mcp-config`; then `--mcp-config`'s, which win over both.
pub fn configured(setup: &Setup, sandbox: &Containment, flags: &McpFlags) -> Configured {
    let mut out = Configured {
        specs: Vec::new(),
        required: Vec::new(),
        problems: Vec::new(),
    };
    let mut entries: BTreeMap<String, (McpServerEntry, &str)> = BTreeMap::new();
    if !flags.strict {
        entries.extend(
            setup
                .mcp_servers
                .iter()
                .map(|(name, entry)| (name.clone(), (entry.clone(), "config.toml"))),
        );
        for (name, entry) in project_servers(setup, &mut out.problems) {
            entries.entry(name).or_insert((entry, MCP_JSON));
        }
    }
    for (name, server) in flag_servers(flags, &mut out.problems) {
        match server {
            FlagServer::Entry(entry) => {
                entries.insert(name, (entry, crate::mcp_flags::FLAG_ORIGIN));
            }
            FlagServer::Embedded(spec) => {
                entries.remove(&name);
                out.specs.push(spec);
            }
        }
    }
    for (name, (entry, origin)) in entries {
        if entry.enabled == Some(false) {
            continue;
        }
        match spec(setup, sandbox, &name, &entry, origin) {
            Ok(spec) => {
                if entry.required {
                    out.required.push(name.clone());
                }
                out.specs.push(spec);
            }
            Err(why) => out.problems.push(format!(
                "the MCP server `{name}` ({origin}) is left out: {why}"
            )),
        }
    }
    out
}

/// The servers of the workspace's `.mcp.json`, when it is trusted.
fn project_servers(setup: &Setup, problems: &mut Vec<String>) -> Vec<(String, McpServerEntry)> {
    // As the snapshot read it: what trust was decided on.
    let Some(bytes) = setup.snapshot.file(MCP_JSON) else {
        return Vec::new();
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        problems.push(format!("{MCP_JSON} is not UTF-8 text"));
        return Vec::new();
    };
    if setup.trust != TrustStatus::Trusted {
        problems.push(format!(
            "{MCP_JSON}: its MCP servers are not started (the workspace is not trusted; \
             `kaizen trust` trusts it)"
        ));
        return Vec::new();
    }
    let file: McpJson = match serde_json::from_str(text) {
        Ok(file) => file,
        Err(err) => {
            problems.push(format!("{MCP_JSON} is not valid: {err}"));
            return Vec::new();
        }
    };
    let mut servers = Vec::new();
    for (name, entry) in file.servers {
        match from_mcp_json(entry) {
            Ok(entry) => servers.push((name, entry)),
            Err(why) => problems.push(format!(
                "the MCP server `{name}` ({MCP_JSON}) is left out: {why}"
            )),
        }
    }
    servers
}

/// A `.mcp.json` entry as a config entry with the default grant (the
/// workspace, no network). It names no host variables: a repository
/// must not be able to send the user's secrets to a program of its
/// choosing.
fn from_mcp_json(entry: McpJsonEntry) -> Result<McpServerEntry, String> {
    let remote = match (entry.kind.as_deref(), &entry.url) {
        (Some(kind), _) if kind != "stdio" => Some(format!("its type is `{kind}`")),
        (_, Some(_)) => Some("it has a `url`".to_string()),
        _ => None,
    };
    if let Some(what) = remote {
        return Err(format!(
            "{what}: a workspace may name stdio servers, which run in the OS sandbox; add a \
             remote server to [mcp_servers] of your config.toml"
        ));
    }
    let expands = std::iter::once(entry.command.as_deref().unwrap_or_default())
        .chain(entry.args.iter().map(String::as_str))
        .chain(entry.env.values().map(String::as_str))
        .any(|text| text.contains("${"));
    if expands {
        return Err(
            "it expands `${...}` variables, and kaizen passes none of the host's variables to a \
             workspace's servers; define it in [mcp_servers] of your config.toml instead"
                .into(),
        );
    }
    Ok(McpServerEntry {
        command: entry.command,
        args: entry.args,
        env: entry.env,
        ..McpServerEntry::default()
    })
}

/// The spec of one entry, or why it cannot run.
fn spec(
    setup: &Setup,
    sandbox: &Containment,
    name: &str,
    entry: &McpServerEntry,
    origin: &str,
) -> Result<ServerSpec, String> {
    let seconds = |value: Option<f64>, default: f64, key: &str| {
        let value = value.unwrap_or(default);
        if value.is_finite() && value > 0.0 {
            Ok(Duration::from_secs_f64(value))
        } else {
            Err(format!("{key} must be a positive number of seconds"))
        }
    };
    let transport = match (&entry.url, &entry.command) {
        (Some(_), Some(_)) => return Err("it has both a `url` and a `command`; keep one".into()),
        (Some(url), None) => Transport::Http(remote(entry, url)?),
        (None, Some(program)) => Transport::Stdio(Box::new(stdio(setup, sandbox, entry, program)?)),
        (None, None) => return Err("it has no `command` to run and no `url` to reach".into()),
    };
    Ok(ServerSpec {
        name: name.to_string(),
        origin: origin.to_string(),
        transport,
        tools: ToolFilter {
            enabled: entry.enabled_tools.clone(),
            disabled: entry.disabled_tools.clone(),
        },
        startup_timeout: seconds(
            entry.startup_timeout_sec,
            STARTUP_TIMEOUT,
            "startup_timeout_sec",
        )?,
        tool_timeout: seconds(entry.tool_timeout_sec, TOOL_TIMEOUT, "tool_timeout_sec")?,
    })
}

/// A remote server: its URL (https, or plain http to this machine), its
/// token from the host's environment, its headers.
fn remote(entry: &McpServerEntry, url: &str) -> Result<HttpServer, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("its url `{url}` is not valid: {e}"))?;
    let local = matches!(parsed.host(), Some(url::Host::Domain("localhost")))
        || matches!(parsed.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
        || matches!(parsed.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback());
    match parsed.scheme() {
        "https" => {}
        "http" if local => {}
        _ => {
            return Err(format!(
                "its url `{url}` is not https (plain http only reaches this machine): a token \
                 or a tool's data would cross the network in the clear"
            ));
        }
    }
    let bearer = match &entry.bearer_token_env_var {
        Some(var) => {
            no_provider_key("bearer_token_env_var names", var)?;
            let token = std::env::var(var)
                .map_err(|_| format!("bearer_token_env_var names {var}, which is not set"))?;
            Some(token)
        }
        None => None,
    };
    Ok(HttpServer {
        url: url.to_string(),
        bearer,
        headers: entry
            .http_headers
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
    })
}

/// A stdio server: its program, environment and sandbox.
fn stdio(
    setup: &Setup,
    sandbox: &Containment,
    entry: &McpServerEntry,
    program: &str,
) -> Result<StdioServer, String> {
    let mut env: Vec<(String, String)> = Vec::new();
    for (key, value) in &entry.env {
        if PROVIDER_KEYS.contains(&key.as_str()) {
            return Err(format!(
                "it sets {key}: provider keys never reach MCP servers"
            ));
        }
        env.push((key.clone(), value.clone()));
    }
    for key in &entry.env_vars {
        if PROVIDER_KEYS.contains(&key.as_str()) {
            return Err(format!(
                "env_vars names {key}: provider keys never reach MCP servers"
            ));
        }
        if let Ok(value) = std::env::var(key) {
            if let Some(provider) = provider_key_in(&value) {
                return Err(format!(
                    "env_vars names {key}, which holds {provider}: provider keys never reach MCP servers, under any name"
                ));
            }
            env.push((key.clone(), value));
        }
    }
    let workspace = &setup.workspace;
    let dirs = |paths: &[PathBuf]| -> Result<Vec<PathBuf>, String> {
        paths
            .iter()
            .map(|path| {
                let dir = resolve(workspace, path);
                dir.canonicalize()
                    .map_err(|e| format!("its directory {} cannot be used: {e}", dir.display()))
            })
            .collect()
    };
    let writable = match &entry.write {
        Some(paths) => dirs(paths)?,
        None => vec![workspace.clone()],
    };
    let readable = dirs(&entry.read)?;
    Ok(StdioServer {
        program: program.to_string(),
        args: entry.args.clone(),
        env,
        cwd: entry.cwd.as_deref().map(|cwd| resolve(workspace, cwd)),
        policy: sandbox.policy(
            Scope {
                writable,
                readable,
                network: entry.network,
                env: Vec::new(),
            },
            &[],
        ),
    })
}

/// What provider key `value` is, if it is one: the value of one of the
/// provider keys in Kaizen's environment, or a value shaped as OpenAI's
/// and Anthropic's keys are (`sk-`).
fn provider_key_in(value: &str) -> Option<String> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if let Some(name) = PROVIDER_KEYS
        .iter()
        .find(|name| std::env::var(name).is_ok_and(|key| key.trim() == value))
    {
        return Some(format!("the value of {name}"));
    }
    value
        .starts_with("sk-")
        .then(|| "a value shaped as a provider key (sk-...)".to_string())
}

/// Refuses `name` when it is a provider key: no server gets one, whatever
/// its entry says (`what` says where the entry named it).
fn no_provider_key(what: &str, name: &str) -> Result<(), String> {
    match PROVIDER_KEYS.contains(&name) {
        true => Err(format!(
            "{what} {name}: provider keys never reach MCP servers"
        )),
        false => Ok(()),
    }
}

/// `~/x` under the user's home; a relative path under the workspace.
fn resolve(workspace: &Path, path: &Path) -> PathBuf {
    absolute(workspace, &expand_home(path))
}

/// Starts the configured servers (all at once) and adds their tools to
/// `registry`. What was left out is told to `notices`; a `required` server
/// that did not start fails the whole.
pub async fn start(
    setup: &Setup,
    sandbox: &Containment,
    flags: &McpFlags,
    registry: &mut ToolRegistry,
    notices: &Notices,
) -> anyhow::Result<Vec<Arc<McpServer>>> {
    let configured = configured(setup, sandbox, flags);
    for problem in &configured.problems {
        notices.warn(problem);
    }
    let servers = start_all(configured.specs, &setup.workspace).await;
    for server in &servers {
        let name = &server.spec().name;
        if let ServerState::Failed(why) = server.state() {
            anyhow::ensure!(
                !configured.required.contains(name),
                "the MCP server `{name}` is required (required = true) and did not start: {why}"
            );
            notices.warn(format!(
                "the MCP server `{name}` did not start, so its tools are missing: {why}"
            ));
            continue;
        }
        let (tools, notes) = McpTool::all(server);
        for note in notes {
            notices.warn(note);
        }
        for tool in tools {
            if let Err(err) = registry.register(tool) {
                notices.warn(err.to_string());
            }
        }
    }
    Ok(servers)
}
