//! The permission flags every front end takes, in Claude Code's spellings.

use clap::Args;

/// How tool calls are permitted (Claude Code's flags and spellings).
#[derive(Args, Clone, Default)]
pub struct PermissionArgs {
    /// default (read-only and sandbox-contained tools run, the rest ask),
    /// acceptEdits (file edits run too), plan (only read-only tools),
    /// bypassPermissions (nothing asks; deny rules still hold), dontAsk
    /// (what would ask is refused).
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Rules that let calls run without asking, e.g. "Bash(npm test:*) Edit";
    /// separated by spaces or commas. Repeatable.
    #[arg(
        long = "allowedTools",
        visible_alias = "allowed-tools",
        value_name = "RULES"
    )]
    pub allowed_tools: Vec<String>,
    /// Rules that refuse calls, e.g. "Bash(rm:*) WebFetch"; a bare tool
    /// name also hides the tool from the model. Repeatable.
    #[arg(
        long = "disallowedTools",
        visible_alias = "disallowed-tools",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,
}
