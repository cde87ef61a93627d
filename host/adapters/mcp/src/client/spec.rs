//! What the host says about one MCP server: how to start it, what it may
//! touch, which of its tools to use, and how long to wait.

use std::path::PathBuf;
use std::time::Duration;

/// One MCP server: how to reach it, which of its tools to use, and how
/// long to wait.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The server's name: the `<server>` of `mcp__<server>__<tool>`.
    pub name: String,
    /// Where it was configured (`config.toml`, `.mcp.json`), for messages.
    pub origin: String,
    /// How kaizen talks to it.
    pub transport: Transport,
    /// Which tools to offer.
    pub tools: ToolFilter,
    /// How long it may take to start (or connect) and list its tools.
    pub startup_timeout: Duration,
    /// How long one call may take.
    pub tool_timeout: Duration,
}

/// How kaizen reaches a server.
#[derive(Debug, Clone)]
pub enum Transport {
    /// A program speaking MCP on its stdin and stdout, in an OS sandbox.
    Stdio(Box<StdioServer>),
    /// A remote server over MCP's streamable HTTP.
    Http(HttpServer),
    /// A server in the program driving the session, reached through its
    /// control channel; it runs that program's code, outside Kaizen's
    /// sandbox.
    Embedder(crate::client::embedder::EmbedderServer),
}

/// A stdio server: the program and its sandbox.
#[derive(Debug, Clone)]
pub struct StdioServer {
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
}

/// A remote server.
#[derive(Clone)]
pub struct HttpServer {
    /// Its endpoint (`https://host/adapters/mcp`).
    pub url: String,
    /// The bearer token sent with every request, read from the host's
    /// environment; it never leaves the host otherwise.
    pub bearer: Option<String>,
    /// Other headers sent with every request.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "<secret>"))
            .field("headers", &self.headers.len())
            .finish()
    }
}

impl ServerSpec {
    /// Whether everything the server can do stays inside the session's
    /// grant: a stdio server without network, writing no directory beyond
    /// `workspace`, in the full OS sandbox. A remote server, or one in
    /// the embedding program, never is.
    pub fn contained(&self, workspace: &std::path::Path) -> bool {
        match &self.transport {
            Transport::Stdio(stdio) => {
                let policy = &stdio.policy;
                !policy.network
                    && !policy.allow_degraded
                    && policy.writable.iter().all(|dir| dir.starts_with(workspace))
            }
            Transport::Http(_) | Transport::Embedder(_) => false,
        }
    }

    /// Whether its tools can change nothing: a stdio server that may write
    /// no directory and use no network. A remote server, or one in the
    /// embedding program, may do anything.
    pub fn read_only(&self) -> bool {
        match &self.transport {
            Transport::Stdio(stdio) => !stdio.policy.network && stdio.policy.writable.is_empty(),
            Transport::Http(_) | Transport::Embedder(_) => false,
        }
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
