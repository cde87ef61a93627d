//! Claude Code compatibility.
//!
//! A Claude Code user's settings work in Kaizen unchanged: the permission
//! rules and mode in `~/.claude/settings.json` and a project's
//! `.claude/settings.json` / `.claude/settings.local.json` ([`settings`]),
//! and their `type: "command"` hooks ([`CommandHook`]), which run in
//! Kaizen's OS sandbox with the event's JSON on stdin and answer by exit
//! code and JSON on stdout exactly as Claude Code documents; and their
//! skills ([`skills`]) and slash commands ([`commands`]), through the
//! `Skill` tool ([`catalogue`]), with what their prompts gather first
//! ([`context`]: `` !`command` `` and `@file`), and agent files ([`agents`]), which `Task`
//! starts by name. Which files count (a
//! project's only once trusted) is the caller's business.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

pub mod agents;
pub mod catalogue;
mod command_hook;
pub mod commands;
pub mod context;
mod front_matter;
mod hook_output;
pub mod settings;
pub mod skills;

pub use command_hook::{CommandHook, CommandRunner};
pub use hook_output::decision_from;
pub use settings::{ClaudeSettings, HookCommand, MatcherGroup, SettingsPermissions};
