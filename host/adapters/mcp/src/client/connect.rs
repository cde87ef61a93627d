//! Reaching one MCP server: a stdio server started in an OS sandbox of its
//! own, a remote one over streamable HTTP, or one in the embedding
//! program over its control channel; then MCP's handshake and
//! the list of its tools, within the startup timeout.

use crate::client::boxed::BoxedTransport;
use crate::client::spec::{HttpServer, ServerSpec, StdioServer, Transport};
use kaizen_sandbox::{Attached, Command, JobState, ProcessError, SANDBOX_PATH, Sandbox};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::TransportAdapterAsyncRW;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{RoleClient, ServiceExt};
use std::sync::Mutex;

/// Bytes of a server's stderr kept to explain its failures.
const STDERR_TAIL: usize = 2000;

/// A server's process, and the end of its stderr as far as it was read.
pub(crate) struct Process {
    attached: Attached,
    stderr: Mutex<String>,
}

impl Process {
    fn exited(&self) -> bool {
        self.attached.state() != JobState::Running
    }

    /// Whether it ends within `limit` (at once when it already has).
    async fn ends_within(&self, limit: std::time::Duration) -> bool {
        tokio::time::timeout(limit, self.attached.wait())
            .await
            .is_ok()
    }

    /// Whether it still runs or how it ended, and the end of its stderr.
    fn explain(&self) -> String {
        let read = self.attached.read_stderr();
        let mut tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        tail.push_str(&String::from_utf8_lossy(&read.stderr));
        if tail.len() > STDERR_TAIL {
            let cut = tail.ceil_char_boundary(tail.len() - STDERR_TAIL);
            tail.drain(..cut);
        }
        let end = match read.state {
            JobState::Running => "it is still running".to_string(),
            JobState::Exited(code) => format!("it exited with code {code}"),
            JobState::Killed => "it was killed by a signal".to_string(),
        };
        let tail = tail.trim();
        if tail.is_empty() {
            format!("{end}, saying nothing on stderr")
        } else {
            format!("{end}; the end of its stderr:\n{tail}")
        }
    }
}

/// One running server: its protocol session, and for a stdio server its
/// process and sandbox, dropped in that order.
pub(crate) struct Live {
    service: RunningService<RoleClient, ClientConfig>,
    process: Option<Process>,
    _sandbox: Option<Sandbox>,
    /// Where a remote server is, for messages.
    url: Option<String>,
}

impl Live {
    /// The protocol session.
    pub fn service(&self) -> &RunningService<RoleClient, ClientConfig> {
        &self.service
    }

    /// Whether the server's process ended (a remote server's connection
    /// shows its end as a closed transport instead).
    pub fn exited(&self) -> bool {
        self.process.as_ref().is_some_and(Process::exited)
    }

    /// Whether the server's process ends within `limit`: a call that
    /// failed may have failed because it is dying. Never for a remote
    /// server.
    pub async fn ends_within(&self, limit: std::time::Duration) -> bool {
        match &self.process {
            Some(process) => process.ends_within(limit).await,
            None => false,
        }
    }

    /// How it ended, as far as kaizen can tell.
    pub fn explain(&self) -> String {
        match (&self.process, &self.url) {
            (Some(process), _) => process.explain(),
            (None, Some(url)) => format!("the connection to {url} was closed"),
            (None, None) => "its connection was closed".to_string(),
        }
    }
}

/// Reaches the server, runs MCP's handshake and lists its tools, all
/// within the startup timeout.
pub(crate) async fn connect(spec: &ServerSpec) -> Result<(Live, Vec<rmcp::model::Tool>), String> {
    match &spec.transport {
        Transport::Stdio(stdio) => connect_stdio(spec, stdio).await,
        Transport::Http(http) => connect_http(spec, http).await,
        Transport::Embedder(embedder) => {
            let link =
                crate::client::embedder::LinkTransport::new(embedder.link.clone(), &spec.name);
            let transport = BoxedTransport::new(link);
            let explain = || "in the program driving the session".to_string();
            let (service, tools) = handshake(spec, transport, explain).await?;
            let live = Live {
                service,
                process: None,
                _sandbox: None,
                url: None,
            };
            Ok((live, tools))
        }
    }
}

/// What kaizen tells servers of itself.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("kaizen", env!("CARGO_PKG_VERSION")),
    )
}

/// The handshake and the tool list over `transport`, within the startup
/// timeout; on failure, `explain` says what the server left behind.
async fn handshake(
    spec: &ServerSpec,
    transport: BoxedTransport,
    explain: impl FnOnce() -> String,
) -> Result<
    (
        RunningService<RoleClient, ClientConfig>,
        Vec<rmcp::model::Tool>,
    ),
    String,
> {
    let talk = async {
        let service = client_config()
            .serve(transport)
            .await
            .map_err(|e| format!("the MCP handshake failed: {e}"))?;
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        Ok::<_, String>((service, tools))
    };
    match tokio::time::timeout(spec.startup_timeout, talk).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(why)) => Err(format!("{why} ({})", explain())),
        Err(_) => Err(format!(
            "it did not finish starting within {}s (startup_timeout_sec in {}) ({})",
            spec.startup_timeout.as_secs_f64(),
            spec.origin,
            explain()
        )),
    }
}

/// Starts the program in its sandbox and talks MCP on its pipes.
async fn connect_stdio(
    spec: &ServerSpec,
    stdio: &StdioServer,
) -> Result<(Live, Vec<rmcp::model::Tool>), String> {
    let sandbox = Sandbox::new(stdio.policy.clone()).map_err(|e| e.to_string())?;
    let command = Command {
        program: stdio.program.clone(),
        args: stdio.args.clone(),
        cwd: stdio.cwd.clone(),
        env: stdio.env.clone(),
        ..Command::default()
    };
    let mut attached = sandbox.attach(command).map_err(|error| match error {
        ProcessError::NotFound(program) => format!(
            "the program `{program}` is not in the sandbox: not on its PATH \
             ({SANDBOX_PATH}) or not in a directory it may read; give its directory in `read` \
             of the server's entry"
        ),
        other => other.to_string(),
    })?;
    let (stdin, stdout) = attached
        .take_pipes()
        .ok_or("the server's standard streams could not be attached")?;
    let process = Process {
        attached,
        stderr: Mutex::new(String::new()),
    };
    let pipes =
        IntoTransport::<RoleClient, std::io::Error, TransportAdapterAsyncRW>::into_transport((
            stdout, stdin,
        ));
    let (service, tools) =
        handshake(spec, BoxedTransport::new(pipes), || process.explain()).await?;
    let live = Live {
        service,
        process: Some(process),
        _sandbox: Some(sandbox),
        url: None,
    };
    Ok((live, tools))
}

/// Connects to a remote server with the host's own HTTP client (see
/// `client::http`): the bearer token and headers are added here.
async fn connect_http(
    spec: &ServerSpec,
    http: &HttpServer,
) -> Result<(Live, Vec<rmcp::model::Tool>), String> {
    let client = crate::client::http::client()?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(http.url.clone());
    if let Some(token) = &http.bearer {
        config = config.auth_header(token.clone());
    }
    let mut headers = std::collections::HashMap::new();
    for (name, value) in &http.headers {
        let name = http::HeaderName::try_from(name.as_str())
            .map_err(|e| format!("the header name `{name}` is not valid: {e}"))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|e| format!("the value of the header `{name}` is not valid: {e}"))?;
        headers.insert(name, value);
    }
    let config = config.custom_headers(headers);
    let transport = BoxedTransport::new(StreamableHttpClientTransport::with_client(client, config));
    let url = http.url.clone();
    let (service, tools) = handshake(spec, transport, || format!("at {url}")).await?;
    let live = Live {
        service,
        process: None,
        _sandbox: None,
        url: Some(http.url.clone()),
    };
    Ok((live, tools))
}
