//! The todo list: its items, the rules a new list must follow, and how it
//! is echoed back to the model.

use std::fmt::Write as _;

use kaizen_sdk::prelude::*;
use kaizen_sdk::serde_json::Value;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde", rename_all = "snake_case")]
pub(crate) enum Status {
    Pending,
    InProgress,
    Completed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// One task.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
pub(crate) struct TodoItem {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    /// pending, in_progress or completed.
    pub status: Status,
    /// The same in the present continuous, shown while the task runs ("Running the tests").
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

impl TodoItem {
    /// The item as the session stores it (Claude Code's field names).
    pub fn to_json(&self) -> Value {
        json!({
            "content": self.content,
            "status": self.status.as_str(),
            "activeForm": self.active_form,
        })
    }
}

/// Checks a new list: every task described, at most one in progress.
pub(crate) fn validate(todos: &[TodoItem]) -> Result<(), ToolError> {
    for (i, todo) in todos.iter().enumerate() {
        if todo.content.trim().is_empty() {
            return Err(ToolError::invalid_input(format!(
                "Task {} has an empty `content`. Describe each task in the imperative (e.g. \
                 \"Run the tests\"), then send the whole list again.",
                i + 1
            )));
        }
        if todo.active_form.trim().is_empty() {
            return Err(ToolError::invalid_input(format!(
                "Task {} (\"{}\") has an empty `activeForm`. Give the present-continuous form \
                 shown while it runs (e.g. \"Running the tests\"), then send the whole list \
                 again.",
                i + 1,
                todo.content
            )));
        }
    }
    let running: Vec<String> = todos
        .iter()
        .enumerate()
        .filter(|(_, todo)| todo.status == Status::InProgress)
        .map(|(i, todo)| format!("{} (\"{}\")", i + 1, todo.content))
        .collect();
    if running.len() > 1 {
        return Err(ToolError::invalid_input(format!(
            "{} tasks are in_progress: {}. Only one task may be in progress at a time: mark the \
             one you are working on in_progress and the others pending (or completed if they \
             are done), then send the whole list again.",
            running.len(),
            running.join(", ")
        )));
    }
    Ok(())
}

/// The confirmation: counts by status and the whole list, so the model
/// sees what the session now holds.
pub(crate) fn render(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "Todo list cleared: it has no tasks now.".to_owned();
    }
    let count = |status| todos.iter().filter(|t| t.status == status).count();
    let (done, running, pending) = (
        count(Status::Completed),
        count(Status::InProgress),
        count(Status::Pending),
    );
    let mut out = format!(
        "Todo list updated: {} ({done} completed, {running} in progress, {pending} pending).",
        if todos.len() == 1 {
            "1 task".to_owned()
        } else {
            format!("{} tasks", todos.len())
        }
    );
    for (i, todo) in todos.iter().enumerate() {
        let _ = write!(
            out,
            "\n{}. [{}] {}",
            i + 1,
            todo.status.as_str(),
            todo.content
        );
    }
    out.push_str(if pending + running == 0 {
        "\nEvery task is completed."
    } else {
        "\nKeep it current: mark each task completed as soon as it is done, and the next one \
         in_progress before you start it."
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(content: &str, status: Status) -> TodoItem {
        TodoItem {
            content: content.into(),
            status,
            active_form: format!("Doing {content}"),
        }
    }

    #[test]
    fn a_list_is_echoed_with_counts_and_statuses() {
        let todos = [
            item("Write the parser", Status::Completed),
            item("Add tests", Status::InProgress),
            item("Update the docs", Status::Pending),
        ];
        validate(&todos).unwrap();
        let text = render(&todos);
        assert!(
            text.starts_with(
                "Todo list updated: 3 tasks (1 completed, 1 in progress, 1 pending).\n\
             1. [completed] Write the parser\n\
             2. [in_progress] Add tests\n\
             3. [pending] Update the docs\n"
            ),
            "{text}"
        );
        assert_eq!(render(&[]), "Todo list cleared: it has no tasks now.");
        assert!(render(&todos[..1]).ends_with("Every task is completed."));
    }

    #[test]
    fn two_tasks_in_progress_are_refused_by_name() {
        let todos = [item("A", Status::InProgress), item("B", Status::InProgress)];
        let err = validate(&todos).unwrap_err();
        assert!(
            err.message()
                .starts_with("2 tasks are in_progress: 1 (\"A\"), 2 (\"B\")."),
            "{err}"
        );
    }

    #[test]
    fn empty_descriptions_are_refused() {
        let err = validate(&[item(" ", Status::Pending)]).unwrap_err();
        assert!(
            err.message().contains("Task 1 has an empty `content`"),
            "{err}"
        );
        let mut todo = item("A", Status::Pending);
        todo.active_form.clear();
        let err = validate(&[todo]).unwrap_err();
        assert!(err.message().contains("empty `activeForm`"), "{err}");
    }

    #[test]
    fn items_are_stored_with_claude_codes_field_names() {
        let stored = item("A", Status::InProgress).to_json();
        assert_eq!(
            stored,
            json!({"content": "A", "status": "in_progress", "activeForm": "Doing A"})
        );
    }
}
