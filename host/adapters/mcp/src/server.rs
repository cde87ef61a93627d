//! The MCP server side: `tools/list` and `tools/call` over a kaizen
//! session, and its skills and commands as `prompts/list` and
//! `prompts/get`.

use crate::convert;
use crate::elicit::ElicitingApprover;
use crate::prompts::{self, Prompts};
use kaizen_loop::DirectSession;
use kaizen_protocol::{Approver, Observer};
use kaizen_tools::ToolRegistry;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, RequestParamsMeta, ServerCapabilities, ServerConfig,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How often a long call reports that it still runs, to a client that
/// asked for progress.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What ends a session: called with its id when the MCP session is over.
pub type OnEnd = Box<dyn Fn(&str) + Send + Sync>;

/// Serves one kaizen session's tools to one MCP client.
pub struct ToolServer {
    tools: Arc<ToolRegistry>,
    session: Arc<DirectSession>,
    observer: Arc<dyn Observer>,
    calls: AtomicU64,
    on_end: Option<OnEnd>,
    prompts: Option<Arc<dyn Prompts>>,
}

impl ToolServer {
    /// Serves `tools`, each call through `session`'s guard, reporting to
    /// `observer`.
    pub fn new(
        tools: Arc<ToolRegistry>,
        session: Arc<DirectSession>,
        observer: Arc<dyn Observer>,
    ) -> Self {
        Self {
            tools,
            session,
            observer,
            calls: AtomicU64::new(0),
            on_end: None,
            prompts: None,
        }
    }

    /// Offers `prompts` too (the session's skills and commands).
    pub fn with_prompts(mut self, prompts: Arc<dyn Prompts>) -> Self {
        self.prompts = Some(prompts);
        self
    }

    /// Calls `on_end` with the session's id when the server goes (the
    /// MCP session ended): its plugins' instances and programs go too.
    pub fn on_end(mut self, on_end: OnEnd) -> Self {
        self.on_end = Some(on_end);
        self
    }
}

impl Drop for ToolServer {
    fn drop(&mut self) {
        if let Some(on_end) = &self.on_end {
            on_end(&self.session.session_id);
        }
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = match self.prompts {
            Some(_) => ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
            None => ServerCapabilities::builder().enable_tools().build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("kaizen", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Kaizen's tools: every one a sandboxed WebAssembly component with only the \
                 access it was granted; programs run in an OS sandbox. Calls pass the same \
                 permission rules and hooks as `kaizen run`; a refused call says why.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self
            .tools
            .tools()
            .filter(|tool| !self.session.guard.permissions.hides(tool.spec()))
            .map(|tool| convert::tool(tool.as_ref()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let listed = self
            .prompts
            .iter()
            .flat_map(|p| p.list())
            .map(prompts::listed);
        Ok(ListPromptsResult::with_all_items(listed.collect()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let Some(source) = &self.prompts else {
            return Err(McpError::invalid_params(
                "this server offers no prompts",
                None,
            ));
        };
        let args = prompts::arguments(request.arguments.as_ref());
        let text = source
            .render(&request.name, &args)
            .map_err(|why| McpError::invalid_params(why, None))?;
        let description = source
            .list()
            .into_iter()
            .find(|info| info.name == request.name)
            .map(|info| info.description);
        Ok(prompts::rendered(description, text).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("mcp_{number}");
        let progress = request
            .progress_token()
            .or_else(|| context.meta.get_progress_token());
        let arguments =
            serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        // A call that asks goes to the client's user when it can show a
        // form; otherwise it is refused, saying what would allow it.
        let approver = ElicitingApprover::for_peer(&context.peer);
        let call = self.session.call(
            &self.tools,
            self.observer.as_ref(),
            &id,
            &request.name,
            &arguments,
            approver.as_ref().map(|a| a as &dyn Approver),
        );
        let heartbeat = async {
            match progress {
                Some(token) => heartbeat(&context.peer, token).await,
                None => std::future::pending().await,
            }
        };
        // A cancelled request cuts the call (its instance and programs go
        // with it).
        let result = tokio::select! {
            result = call => result,
            () = heartbeat => unreachable!("the heartbeat never ends"),
            () = context.ct.cancelled() => {
                return Err(McpError::internal_error("the call was cancelled", None));
            }
        };
        Ok(match result {
            Ok(output) => convert::success(output),
            Err(error) => convert::failure(error),
        }
        .into())
    }
}

/// Tells the client every [`PROGRESS_EVERY`] that the call is still
/// running (clients that asked for progress reset their timeouts on it).
/// Never returns.
async fn heartbeat(peer: &Peer<RoleServer>, token: ProgressToken) {
    let started = std::time::Instant::now();
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    ticks.tick().await;
    for beat in 1u64.. {
        ticks.tick().await;
        let note = ProgressNotificationParam::new(token.clone(), beat as f64).with_message(
            format!("still running after {}s", started.elapsed().as_secs()),
        );
        // A client that went away is the call's cancellation's business.
        let _ = peer.notify_progress(note).await;
    }
}

/// Serves `server` on this process's stdin and stdout until the client
/// goes away.
pub async fn serve_stdio(server: ToolServer) -> anyhow::Result<()> {
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
