//! The flags of `kaizen run` and those other commands share: the
//! workspace and plugins, and how tool calls are permitted.

use crate::PermissionArgs;
use crate::{output, run_options};
use clap::Args;
use kaizen_app::session;
use std::path::PathBuf;

/// `kaizen run` flags.
#[derive(Args)]
pub struct RunArgs {
    /// The task. Read from stdin when omitted.
    task: Option<String>,
    /// The model, e.g. gpt-4.1, claude-sonnet-4-5, ollama/qwen3 (default: the
    /// configured provider's default model).
    #[arg(long)]
    model: Option<String>,
    /// openai, anthropic or ollama (default: inferred from the model name).
    #[arg(long)]
    provider: Option<String>,
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// text streams the answer; json prints one result object; stream-json
    /// prints Claude Code's messages, one per line (what its Agent SDKs
    /// read); events prints Kaizen's own events, one per line.
    #[arg(long, value_enum, default_value = "text")]
    output_format: output::OutputFormat,
    /// Claude Code's flag for stream-json; Kaizen's streams always carry
    /// every message, so it changes nothing.
    #[arg(long)]
    verbose: bool,
    /// Claude Code's non-interactive mode, which `kaizen run` always is.
    #[arg(long, short = 'p')]
    print: bool,
    /// With stream-json: the model's text as it streams too, as
    /// `stream_event` messages.
    #[arg(long)]
    include_partial_messages: bool,
    /// Stands instead of Kaizen's own system prompt (who the agent is,
    /// where it works, the project's AGENTS.md/CLAUDE.md); the skills and
    /// agents the session offers are still listed. Empty keeps Kaizen's.
    #[arg(long, value_name = "TEXT")]
    system_prompt: Option<String>,
    /// Added to the end of the system prompt.
    #[arg(long, value_name = "TEXT")]
    append_system_prompt: Option<String>,
    /// Where tool calls that need approval are asked: `stdio`, as
    /// control requests on stdout answered on stdin (with --input-format
    /// stream-json, which asks there anyway).
    #[arg(long, value_name = "stdio")]
    permission_prompt_tool: Option<String>,
    /// text: the task is the argument (or stdin); stream-json: messages
    /// are JSON lines on stdin (Claude Code's format), the first the task,
    /// each later one taken at the run's next model call or starting the
    /// next run; `{"type":"control_request","request":{"subtype":"interrupt"}}`
    /// interrupts.
    #[arg(long, value_enum, default_value = "text")]
    input_format: InputFormat,
    /// Stop after this many model calls (status max_cycles, exit 3).
    #[arg(long, alias = "max-turns", default_value_t = kaizen_loop::DEFAULT_MAX_CYCLES)]
    max_cycles: u32,
    /// Stop once this many USD are spent (status budget_exceeded, exit 3).
    #[arg(long, alias = "max-budget-usd", default_value_t = kaizen_loop::DEFAULT_BUDGET_USD)]
    budget_usd: f64,
    /// Stop after this many seconds of wall-clock time (status timeout, exit 3).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Append every model response to FILE, for --replay.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Serve model responses from a recording instead of a provider (no
    /// network, no key).
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
    /// Go on with a session (an id from `kaizen sessions list`, or `last`):
    /// from its last checkpoint and log, in its workspace and with its
    /// model unless given. TASK, if any, is the next user message. Calls
    /// that were cut off are reported to the model as such, never silently
    /// redone; programs it started are gone.
    #[arg(long, value_name = "ID", conflicts_with = "fork")]
    resume: Option<String>,
    /// Go on with the last session (`--resume last`).
    #[arg(long = "continue", short = 'c', conflicts_with_all = ["resume", "fork"])]
    continue_last: bool,
    /// Start a new session from another one's state (at its end, or after
    /// cycle --at), leaving the original untouched.
    #[arg(long, value_name = "ID")]
    fork: Option<String>,
    /// With --fork: the cycle to fork after (0: before the first model call).
    #[arg(long, value_name = "CYCLE", requires = "fork")]
    at: Option<u32>,
    /// The planner that shapes each THINK step: react, plan-execute-verify,
    /// tree-of-thoughts, reflexion, another planner plugin by name, or a
    /// plugin directory (default: `[planner] name` in the config, else none).
    #[arg(long, value_name = "NAME|PATH")]
    planner: Option<String>,
    /// The agent that runs the task: kaizen (this loop), claude-code,
    /// codex or gemini-cli (their CLIs, run as child processes with these
    /// limits and permission mode), or auto (the runtimes that can do the
    /// task, cheapest and fastest on their recent runs first, falling back
    /// to the next when one is missing or fails before doing any work).
    /// The result says which ran it and why (`kaizen runtimes` lists them).
    #[arg(long, value_name = "NAME|auto")]
    runtime: Option<String>,
    /// Run the session on a Restate cluster of Kaizen workers (`kaizen
    /// worker`) through its ingress at URL (e.g. http://host:8080): a
    /// worker that is lost mid-step is replaced without running a finished
    /// step twice. Events and the result print as for a local run; the
    /// session store ($KAIZEN_HOME/sessions) must be shared with the
    /// workers.
    #[arg(long, value_name = "URL", conflicts_with = "runtime")]
    cluster: Option<String>,
    /// The cluster's admin API, for Ctrl-C's cancel (default: the
    /// ingress host on port 9070).
    #[arg(long, value_name = "URL", requires = "cluster")]
    cluster_admin: Option<String>,
    #[command(flatten)]
    permissions: PermissionArgs,
}

/// Where `kaizen run` runs the task.
pub enum Placement {
    /// On this machine: Kaizen's loop, or the runtime named (or `auto`).
    Here(Option<String>),
    /// On a cluster: its ingress and admin addresses.
    Cluster {
        /// The ingress URL.
        ingress: String,
        /// The admin URL, when given.
        admin: Option<String>,
    },
}

/// Where to work and which plugins to load.
#[derive(Args, Clone)]
pub struct WorkspaceArgs {
    /// The workspace: granted to plugins read-write (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Load plugins from DIR too (a plugin directory or a directory of them). Repeatable.
    #[arg(long = "plugins", value_name = "DIR")]
    plugins: Vec<PathBuf>,
    /// Grant every plugin read-write access to DIR as well. Repeatable.
    #[arg(long = "add-dir", value_name = "DIR")]
    add_dirs: Vec<PathBuf>,
    /// MCP servers to use as well, as Claude Code takes them: a JSON
    /// object `{"mcpServers": {NAME: {...}}}` or a file holding one; a
    /// server of `"type": "sdk"` is served by the Agent SDK driving the
    /// session. Repeatable.
    #[arg(long = "mcp-config", value_name = "JSON|FILE")]
    mcp_configs: Vec<String>,
    /// Only the servers of --mcp-config: none of config.toml's or the
    /// workspace's .mcp.json.
    #[arg(long)]
    strict_mcp_config: bool,
}

/// `--input-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum InputFormat {
    /// The task as an argument, or all of stdin.
    Text,
    /// JSON lines on stdin, read while the run works.
    StreamJson,
}

impl RunArgs {
    /// Where to run, and what; an error for flags that cannot go together.
    pub fn into_options(
        self,
    ) -> Result<(Placement, run_options::RunOptions), kaizen_app::session_builder::SetupError> {
        if let Some(tool) = &self.permission_prompt_tool
            && tool != "stdio"
        {
            return Err(kaizen_app::session_builder::usage(anyhow::anyhow!(
                "--permission-prompt-tool {tool}: Kaizen asks over stdio only \
                 (--permission-prompt-tool stdio, with --input-format stream-json)"
            )));
        }
        if self.permission_prompt_tool.is_some() && self.input_format != InputFormat::StreamJson {
            return Err(kaizen_app::session_builder::usage(anyhow::anyhow!(
                "--permission-prompt-tool stdio needs --input-format stream-json: the answers \
                 come on stdin"
            )));
        }
        // Claude Code's flags that change nothing here.
        let _ = (self.verbose, self.print);
        let resume = self
            .resume
            .or(self.continue_last.then(|| "last".to_string()));
        let options = run_options::RunOptions {
            task: self.task,
            model: self.model,
            provider: self.provider,
            format: self.output_format,
            partial_messages: self.include_partial_messages,
            system_prompt: self.system_prompt,
            append_system_prompt: self.append_system_prompt,
            max_cycles: self.max_cycles,
            budget_usd: self.budget_usd,
            timeout: self.timeout,
            record: self.record,
            replay: self.replay,
            plugins: self.workspace.into(),
            planner: self.planner,
            permissions: self.permissions,
            session: match (resume, self.fork) {
                (Some(id), _) => session::Choice::Resume(id),
                (None, Some(id)) => session::Choice::Fork { id, at: self.at },
                (None, None) => session::Choice::New,
            },
            stream_input: self.input_format == InputFormat::StreamJson,
            compact_only: None,
        };
        let placement = match self.cluster {
            Some(ingress) => Placement::Cluster {
                ingress,
                admin: self.cluster_admin,
            },
            None => Placement::Here(self.runtime),
        };
        Ok((placement, options))
    }
}

impl From<WorkspaceArgs> for kaizen_app::plugin_loading::Selection {
    fn from(args: WorkspaceArgs) -> Self {
        Self {
            cwd: args.cwd,
            plugins: args.plugins,
            add_dirs: args.add_dirs,
            mcp: kaizen_app::mcp_flags::McpFlags {
                configs: args.mcp_configs,
                strict: args.strict_mcp_config,
                embedder: None,
                embedded: Vec::new(),
            },
        }
    }
}
