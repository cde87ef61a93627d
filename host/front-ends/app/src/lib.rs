//! Kaizen as a library: a session's assembly, from configuration to a
//! running agent.
//!
//! A front end (the `kaizen` command, a cluster's worker, an editor's
//! protocol, a program embedding Kaizen) describes what to start in a
//! [`session_builder::SessionRequest`] and who answers in
//! [`session_builder::Collaborators`]; the [`session_builder::SessionBuilder`]
//! runs the stages: the provider; the user's and the workspace's
//! configuration ([`config`], each table a [`section::Section`] with its
//! scope), read once and trusted as read ([`snapshot`], [`trust`]);
//! permissions ([`guard_setup`]); plugins ([`plugin_loading`], the
//! built-ins embedded by this crate's build script: [`builtins`]); memory;
//! the guard; the session store ([`session`]); the agent's settings.
//!
//! A task run on Kaizen's loop start to finish, the session continued,
//! built and run until no task is left, is [`run`]'s, whoever starts it.
//! What the other entry points start is here too, for any front end: a
//! task on another agent runtime or Kaizen's own loop ([`runtimes`]); a
//! cluster's worker ([`worker`]), whose runs are [`hosted`]; the tools
//! `kaizen mcp serve` serves ([`mcp_serve`]) and the MCP servers a run
//! uses ([`mcp_list`]).

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

pub mod approvals;
pub mod audit_anchor;
pub mod builtins;
pub mod config;
pub mod config_file;
pub mod context_config;
pub mod eval;
pub mod external_sessions;
pub mod guard_setup;
pub mod home;
pub mod hosted;
pub mod kits;
pub mod mcp_config;
pub mod mcp_flags;
pub mod mcp_list;
pub mod mcp_serve;
pub mod mcp_servers;
pub mod memory_setup;
pub mod model_config;
pub mod notices;
pub mod permission_flags;
pub mod planner_setup;
pub mod plugin_host;
pub mod plugin_install;
pub mod plugin_listing;
pub mod plugin_loading;
pub mod run;
pub mod runtimes;
pub mod section;
pub mod session;
pub mod session_builder;
pub mod sessions;
pub mod skills_setup;
pub mod snapshot;
pub mod tool_calls;
pub mod transcript;
pub mod trust;
pub mod typed_answer;
pub mod worker;
pub mod workspace_roots;
