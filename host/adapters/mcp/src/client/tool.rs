//! [`McpTool`]: one tool of an MCP server as a kaizen tool.

use crate::client::names::tool_name;
use crate::client::result;
use crate::client::server::McpServer;
use kaizen_tools::{CallContext, Danger, Tool, ToolFuture, ToolSpec};
use std::sync::Arc;

/// A tool an MCP server listed, named `mcp__<server>__<tool>`.
pub struct McpTool {
    server: Arc<McpServer>,
    /// The server's own name for it.
    remote: String,
    spec: ToolSpec,
    source: String,
}

impl McpTool {
    /// The tools of `server` that its filter lets through, and a note for
    /// each listed tool that cannot be offered.
    pub fn all(server: &Arc<McpServer>) -> (Vec<Arc<dyn Tool>>, Vec<String>) {
        let spec = server.spec();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut notes = Vec::new();
        for listed in server.listed_tools() {
            if !spec.tools.allows(&listed.name) {
                continue;
            }
            match tool_name(&spec.name, &listed.name) {
                Some(name) => tools.push(Arc::new(Self::new(server, listed, name))),
                None => notes.push(format!(
                    "the MCP server `{}`: its tool `{}` is left out: `mcp__{}__{}` would be \
                     longer than the {} characters model APIs accept; rename the server",
                    spec.name,
                    listed.name,
                    spec.name,
                    listed.name,
                    crate::client::MAX_TOOL_NAME
                )),
            }
        }
        (tools, notes)
    }

    fn new(server: &Arc<McpServer>, listed: &rmcp::model::Tool, name: String) -> Self {
        // The server's read-only hint holds only where its grant makes it
        // true: a server that may write or reach the network gets no
        // concurrency and no pass in plan mode on its word alone.
        let claims_read_only = listed
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        let read_only = claims_read_only && server.spec().read_only();
        let description = listed
            .description
            .as_deref()
            .or(listed.title.as_deref())
            .unwrap_or("")
            .to_string();
        Self {
            server: server.clone(),
            remote: listed.name.to_string(),
            spec: ToolSpec {
                name,
                description,
                input_schema: serde_json::Value::Object((*listed.input_schema).clone()),
                danger: if read_only {
                    Danger::Safe
                } else {
                    Danger::High
                },
                read_only,
            },
            source: format!("mcp:{}", server.spec().name),
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> &str {
        &self.source
    }

    fn contained(&self) -> bool {
        self.server.contained()
    }

    fn call<'a>(&'a self, _ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments = match input {
                serde_json::Value::Object(object) => object.clone(),
                // The registry checked the input against the schema, whose
                // type MCP requires to be an object.
                _ => Default::default(),
            };
            let answer = self.server.call(&self.remote, arguments).await?;
            result::output(&self.server.spec().name, &self.remote, answer)
        })
    }
}
