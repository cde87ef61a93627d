//! [`McpServer`]: one MCP server of the session, started (or connected)
//! with it, restarted once if it dies, and ended with it.

use crate::client::connect::{Live, connect};
use crate::client::spec::ServerSpec;
use kaizen_tools::{ToolError, ToolErrorKind};
use rmcp::model::{CallToolRequestParams, CallToolResult, Implementation, JsonObject};
use rmcp::service::ServiceError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long kaizen waits to see a server's process end when its call
/// failed or its pipe closed: long enough to tell a dying server from one
/// that answered with an error, and to give the death's exit code.
const DYING: Duration = Duration::from_millis(200);

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Started and answering.
    Running,
    /// It died once, with this explanation, and runs again.
    Restarted(String),
    /// It could not start, or died twice: its tools fail with this reason.
    Failed(String),
}

/// One MCP server of the session and the tools it listed.
pub struct McpServer {
    spec: ServerSpec,
    workspace: PathBuf,
    live: tokio::sync::RwLock<Option<Arc<Live>>>,
    state: Mutex<ServerState>,
    tools: Vec<rmcp::model::Tool>,
    server_info: Option<Implementation>,
}

/// Starts every server at once; each comes back running or failed.
pub async fn start_all(specs: Vec<ServerSpec>, workspace: &Path) -> Vec<Arc<McpServer>> {
    let starts = specs
        .into_iter()
        .map(|spec| McpServer::start(spec, workspace.to_path_buf()));
    futures::future::join_all(starts).await
}

impl McpServer {
    /// Starts the server and lists its tools, within its startup timeout.
    /// A server that cannot start is returned [`ServerState::Failed`].
    pub async fn start(spec: ServerSpec, workspace: PathBuf) -> Arc<Self> {
        let (live, state, tools, server_info) = match connect(&spec).await {
            Ok((live, tools)) => {
                let info = live
                    .service()
                    .peer_info()
                    .and_then(|info| info.server_info.clone());
                (Some(Arc::new(live)), ServerState::Running, tools, info)
            }
            Err(why) => {
                tracing::warn!("the MCP server `{}` did not start: {why}", spec.name);
                (None, ServerState::Failed(why), Vec::new(), None)
            }
        };
        Arc::new(Self {
            spec,
            workspace,
            live: tokio::sync::RwLock::new(live),
            state: Mutex::new(state),
            tools,
            server_info,
        })
    }

    /// What the host said about it.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// Where it stands now.
    pub fn state(&self) -> ServerState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The tools it listed when it started (all of them, before the
    /// filter).
    pub fn listed_tools(&self) -> &[rmcp::model::Tool] {
        &self.tools
    }

    /// The name and version it gave, once started.
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server_info.as_ref()
    }

    /// Whether its effects stay inside the session's grant.
    pub fn contained(&self) -> bool {
        self.spec.contained(&self.workspace)
    }

    fn set_state(&self, state: ServerState) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    /// Calls its tool `tool` (the server's own name for it) with
    /// `arguments`, within the tool timeout.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ToolError> {
        let live = self.current().await?;
        let name = &self.spec.name;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        // Dropping the request on timeout tells the server it was cancelled.
        let answer = tokio::time::timeout(
            self.spec.tool_timeout,
            live.service().peer().call_tool(params),
        )
        .await;
        match answer {
            Ok(Ok(result)) => Ok(result),
            Err(_) => Err(ToolError::new(
                ToolErrorKind::Timeout,
                format!(
                    "{tool} of the MCP server `{name}` did not answer within {}s, so the call was \
                     cancelled; the server's tool_timeout_sec in {} sets the limit",
                    self.spec.tool_timeout.as_secs_f64(),
                    self.spec.origin
                ),
            )),
            Ok(Err(ServiceError::McpError(error))) => Err(ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "the MCP server `{name}` refused the call: {}",
                    error.message
                ),
            )),
            Ok(Err(ServiceError::UnexpectedResponse)) => Err(ToolError::new(
                ToolErrorKind::Crashed,
                format!(
                    "the MCP server `{name}` answered {tool} with a malformed result (not a \
                     tool result MCP defines)"
                ),
            )),
            Ok(Err(error)) => {
                let closed = matches!(error, ServiceError::TransportClosed);
                if closed || live.ends_within(DYING).await {
                    let what = self.crashed(&live).await;
                    Err(ToolError::new(
                        ToolErrorKind::Crashed,
                        format!("the MCP server `{name}` stopped during the call: {what}"),
                    ))
                } else {
                    Err(ToolError::new(
                        ToolErrorKind::Failed,
                        format!("the call to the MCP server `{name}` failed: {error}"),
                    ))
                }
            }
        }
    }

    /// The running server, restarted first if it died since the last
    /// call.
    async fn current(&self) -> Result<Arc<Live>, ToolError> {
        let live = self.live.read().await.clone();
        let live = match live {
            Some(live) if live.exited() => {
                self.crashed(&live).await;
                self.live.read().await.clone()
            }
            other => other,
        };
        live.ok_or_else(|| match self.state() {
            ServerState::Failed(why) => ToolError::new(
                ToolErrorKind::Failed,
                format!(
                    "the MCP server `{}` is not available: {why}",
                    self.spec.name
                ),
            ),
            _ => ToolError::new(
                ToolErrorKind::Failed,
                format!("the MCP server `{}` is not running", self.spec.name),
            ),
        })
    }

    /// Handles the death of `dead`: the first time, starts the server
    /// again; the second, gives up. Returns what happened, for the model.
    async fn crashed(&self, dead: &Arc<Live>) -> String {
        let mut live = self.live.write().await;
        let name = &self.spec.name;
        if !live
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, dead))
        {
            // Another call already dealt with it.
            return match self.state() {
                ServerState::Failed(why) => why,
                _ => "it was restarted; call again".to_string(),
            };
        }
        // The pipe closes a moment before the process is seen to end.
        dead.ends_within(DYING).await;
        let why = dead.explain();
        *live = None;
        // A server that runs again after a restart has had its one.
        if matches!(self.state(), ServerState::Restarted(_)) {
            let failed = format!(
                "it stopped again ({why}), after one restart, so kaizen does not start it again \
                 this session"
            );
            tracing::warn!("the MCP server `{name}` {failed}");
            self.set_state(ServerState::Failed(failed.clone()));
            return failed;
        }
        tracing::warn!("the MCP server `{name}` stopped ({why}); restarting it once");
        match connect(&self.spec).await {
            Ok((restarted, _)) => {
                *live = Some(Arc::new(restarted));
                self.set_state(ServerState::Restarted(why.clone()));
                format!("{why}. Kaizen restarted it; a call that did not finish may be tried again")
            }
            Err(again) => {
                let failed = format!("{why}. Restarting it failed: {again}");
                self.set_state(ServerState::Failed(failed.clone()));
                failed
            }
        }
    }
}
