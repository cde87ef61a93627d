//! `todo`: the built-in `TodoWrite` tool, Claude Code's task list.
//!
//! Each call replaces the session's whole list. The list lives in the
//! session's notes (the `session` host interface), so the host keeps it in
//! the session's state: it is checkpointed with the session and reported
//! to the user as it changes. The checks and the rendering are plain Rust,
//! tested natively.

mod list;

use kaizen_sdk::prelude::*;
use kaizen_sdk::session;

use list::TodoItem;

/// Input of `TodoWrite`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct TodoWriteInput {
    /// The updated todo list: every task, in order. It replaces the previous list.
    todos: Vec<TodoItem>,
}

/// The `TodoWrite` tool.
struct TodoWrite;

impl Tool for TodoWrite {
    const NAME: &'static str = "TodoWrite";
    const DESCRIPTION: &'static str = "\
Creates and updates the task list for this session. Use it to plan and track work with \
several steps, and to show the user your progress.
When to use it: tasks with three or more distinct steps; when the user gives a list of things \
to do; after receiving new instructions (add them); when you start a task (mark it \
in_progress first) and when you finish one (mark it completed at once, without batching). \
Skip it for a single trivial step or a purely conversational request.
Rules:
- Each call sends the whole list; it replaces the previous one.
- Each task has `content` (imperative: \"Run the tests\"), `activeForm` (present continuous, \
shown while it runs: \"Running the tests\") and `status`: pending, in_progress or completed.
- At most one task is in_progress at a time.
- Mark a task completed only when it is fully done: not when tests fail, the work is partial \
or an error is unresolved; then keep it in_progress and add a task for what blocks it.
- Remove tasks that are no longer relevant.";
    const DANGER: Danger = Danger::Safe;
    type Input = TodoWriteInput;

    fn call(_ctx: &CallContext, input: TodoWriteInput) -> Result<Output, ToolError> {
        list::validate(&input.todos)?;
        let old = session::todos();
        let todos: Vec<_> = input.todos.iter().map(TodoItem::to_json).collect();
        session::set_todos(&todos);
        Ok(Output::text(list::render(&input.todos))
            .with_metadata(json!({"old_todos": old, "todos": todos})))
    }
}

export_tools!(TodoWrite);
