//! Kaizen over the Model Context Protocol, with the official Rust SDK
//! (`rmcp`).
//!
//! [`ToolServer`] serves a session's tools to an MCP client: every tool of
//! the registry with its schema and annotations, each call through the
//! same guard as `kaizen run` (permission rules and mode, hooks), each
//! component in its grant and each program in the OS sandbox. One server
//! is one kaizen session: what its calls note (files read, the todo list)
//! lasts as long as the MCP session.
//!
//! [`client`] goes the other way: MCP servers, each in an OS sandbox of
//! its own, whose tools join a session as `mcp__<server>__<tool>`.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

pub mod client;
mod convert;
mod elicit;
mod http;
pub mod prompts;
mod server;

pub use http::{HttpOptions, serve_http};
pub use server::{OnEnd, ToolServer, serve_stdio};
