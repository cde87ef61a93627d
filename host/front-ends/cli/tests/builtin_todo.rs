//! The built-in `TodoWrite` tool through `kaizen run`: the list is checked,
//! echoed to the model, and kept in the session, whose `events`
//! output reports every new list.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::Run;
use common::workspace::Workspace;
use kaizen_model_server::{Reply, Script};
use serde_json::{Value, json};

fn todo(content: &str, status: &str) -> Value {
    json!({"content": content, "status": status, "activeForm": format!("Doing {content}")})
}

fn todo_write(todos: &[Value]) -> (&'static str, Value) {
    ("TodoWrite", json!({ "todos": todos }))
}

/// The model's call of [`todo_write`].
fn todo_reply(todos: &[Value]) -> Reply {
    let (name, input) = todo_write(todos);
    Reply::tool(name, &input.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_list_is_confirmed_and_echoed() {
    let ws = Workspace::new();
    let calls = ws
        .session(
            &[
                todo_write(&[
                    todo("Find the bug", "completed"),
                    todo("Fix it", "in_progress"),
                    todo("Run the tests", "pending"),
                ]),
                todo_write(&[todo("Find the bug", "completed")]),
                todo_write(&[]),
            ],
            &[],
        )
        .await;
    assert_eq!(
        calls.ok(0),
        "Todo list updated: 3 tasks (1 completed, 1 in progress, 1 pending).\n\
         1. [completed] Find the bug\n\
         2. [in_progress] Fix it\n\
         3. [pending] Run the tests\n\
         Keep it current: mark each task completed as soon as it is done, and the next one \
         in_progress before you start it."
    );
    assert!(
        calls.ok(1).ends_with("Every task is completed."),
        "{}",
        calls.ok(1)
    );
    assert_eq!(calls.ok(2), "Todo list cleared: it has no tasks now.");
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_lists_are_refused_with_what_to_fix() {
    let ws = Workspace::new();
    let mut unnamed = todo("x", "pending");
    unnamed["content"] = json!("");
    let mut no_active_form = todo("Ship it", "pending");
    no_active_form["activeForm"] = json!(" ");
    let calls = ws
        .session(
            &[
                todo_write(&[todo("A", "in_progress"), todo("B", "in_progress")]),
                todo_write(&[unnamed]),
                todo_write(&[no_active_form]),
                todo_write(&[todo("A", "started")]),
            ],
            &[],
        )
        .await;
    let two = calls.err(0);
    assert!(
        two.starts_with("2 tasks are in_progress: 1 (\"A\"), 2 (\"B\")."),
        "{two}"
    );
    assert!(
        two.contains("Only one task may be in progress at a time"),
        "{two}"
    );
    assert!(calls.err(1).contains("Task 1 has an empty `content`"));
    assert!(
        calls
            .err(2)
            .contains("Task 1 (\"Ship it\") has an empty `activeForm`")
    );
    // The schema names the statuses.
    let status = calls.err(3);
    assert!(
        status.contains("status") || status.contains("started"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_list_is_part_of_the_session_and_reported_as_it_changes() {
    let run = Run::builtins_only();
    let first = [todo("Plan", "in_progress"), todo("Build", "pending")];
    let second = [todo("Plan", "completed"), todo("Build", "in_progress")];
    let script = Script::new()
        .reply(todo_reply(&first))
        // A refused list leaves the session's list as it was.
        .reply(todo_reply(&[
            todo("A", "in_progress"),
            todo("B", "in_progress"),
        ]))
        .reply(todo_reply(&second))
        .reply(Reply::text("Planned and building."));
    let ran = run
        .scripted(script)
        .model("gpt-4o-mini")
        .stream_json(&["Plan it"])
        .await;
    assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
    let events = ran.events();
    let lists: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "todos")
        .map(|event| &event["todos"])
        .collect();
    assert_eq!(lists, [&json!(first), &json!(second)]);
    // Each list comes right after the result of the call that set it.
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let first_todos = kinds.iter().position(|k| *k == "todos").unwrap();
    assert_eq!(kinds[first_todos - 1], "tool_result");
    assert_eq!(events.last().unwrap()["type"], "result");
}
