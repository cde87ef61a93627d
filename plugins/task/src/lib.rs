//! `task`: the built-in `Task` tool, which hands a self-contained task to a
//! sub-agent, the way Claude Code's tool of the same name does.
//!
//! The sub-agent runs in the host through the `agent` import: a fresh
//! conversation, the session's tools chosen by `subagent_type` (never
//! `Task` itself), and what is left of the session's budget and time. Only
//! its final message comes back. Turning the host's report into what the
//! model reads is plain Rust, tested natively:
//! `cargo test --manifest-path plugins/Cargo.toml -p kaizen-builtin-task`.

mod report;

use kaizen_sdk::host::agent::{self, AgentRequest};
use kaizen_sdk::prelude::*;

/// Input of `Task`, shaped as Claude Code's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct TaskInput {
    /// A short (3-5 word) description of the task.
    #[schemars(length(min = 1))]
    description: String,
    /// The task for the sub-agent to perform: complete and self-contained, since the sub-agent sees nothing of this conversation.
    #[schemars(length(min = 1))]
    prompt: String,
    /// The type of sub-agent to use for this task: "general-purpose" or "Explore".
    subagent_type: String,
}

/// The `Task` tool.
struct Task;

impl Tool for Task {
    const NAME: &'static str = "Task";
    const DESCRIPTION: &'static str = "\
Launches a sub-agent to handle a complex, multi-step task on its own. The sub-agent has its \
own conversation and tools, works until the task is done, and returns one final message.

Sub-agent types (subagent_type):
- general-purpose: every tool of this session except Task. For researching complex \
questions, searching for code when you are not confident of finding it in the first few \
tries, and carrying out multi-step changes.
- Explore: read-only tools (Read, Glob, Grep and the like; it cannot change files). For \
finding files, searching code and answering questions about the codebase quickly.

When not to use it: to read a specific file path (use Read), to find a class or definition \
by name (use Grep or Glob), or to search within two or three known files (use Read).

Usage notes:
- Launch several sub-agents at once when the tasks are independent: send several Task calls \
in one message.
- The sub-agent sees nothing of this conversation: the prompt must say everything it needs \
(paths, what was already tried, what to return) and whether it should change code or only \
research.
- Its result is not shown to the user: summarize what matters in your answer.
- It spends from this session's budget and time.
- A sub-agent's report is generally trustworthy, but check its claims about changes it made.";
    // A sub-agent's own calls each follow their tool's rules; the call
    // itself changes nothing, and independent sub-agents should run side
    // by side, as Claude Code runs them.
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Moderate;
    type Input = TaskInput;

    fn call(_ctx: &CallContext, input: TaskInput) -> Result<Output, ToolError> {
        let request = AgentRequest {
            description: input.description,
            prompt: input.prompt,
            subagent_type: input.subagent_type,
        };
        let ended = agent::run(&request).map_err(report::refused)?;
        Ok(report::ended(&report::Ending {
            output: ended.output,
            status: ended.status,
            error: ended.error,
            cycles: ended.cycles,
            cost_usd: ended.cost_usd,
            tool_calls: ended.tool_calls,
        }))
    }
}

export_tools!(Task);
