//! The MCP client side: other people's MCP servers as kaizen tools.
//!
//! Each stdio server runs in an OS sandbox of its own, shaped by its
//! grant ([`StdioServer::policy`]: by default the workspace and no
//! network); a remote server is reached over streamable HTTP with the
//! host's own client, its token added by the host; one in the program
//! driving the session through that program's control channel
//! ([`EmbedderLink`]). Their tools join the
//! registry as `mcp__<server>__<tool>`.
//! From there they are tools like any other: schemas checked before the
//! call, permission rules and hooks applied by the loop. A server's
//! annotations are its own claims: a tool counts as read-only only where
//! the server's grant makes that true (no writable directory, no network).

mod boxed;
mod connect;
mod embedder;
mod http;
mod names;
mod result;
mod server;
mod spec;
mod tool;

pub use embedder::{EmbedderLink, EmbedderServer, Exchange};
pub use names::{MAX_TOOL_NAME, tool_name};
pub use server::{McpServer, ServerState, start_all};
pub use spec::{HttpServer, ServerSpec, StdioServer, ToolFilter, Transport};
pub use tool::McpTool;
