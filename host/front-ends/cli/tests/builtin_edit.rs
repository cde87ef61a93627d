//! The built-in `Edit` and `MultiEdit` tools through `kaizen run`: the
//! real binary, the real components, and a scripted model that reads and
//! edits in one session, as a model would.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::workspace::Workspace;
use serde_json::{Value, json};

fn read(path: &str) -> (&'static str, Value) {
    ("Read", json!({ "file_path": path }))
}

fn edit(path: &str, old: &str, new: &str) -> (&'static str, Value) {
    (
        "Edit",
        json!({ "file_path": path, "old_string": old, "new_string": new }),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn read_then_edit_replaces_a_unique_string_and_shows_a_numbered_snippet() {
    let ws = Workspace::new();
    let lines: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    let path = ws.write("src/list.txt", &lines);
    let calls = ws
        .session(&[read(&path), edit(&path, "line 7\n", "line seven\n")], &[])
        .await;
    let text = calls.ok(1);
    assert!(
        text.starts_with(&format!(
            "The file {path} has been updated. Here is the result of running `cat -n` on a \
             snippet of the edited file:\n     3\tline 3\n"
        )),
        "{text}"
    );
    assert!(text.contains("     7\tline seven\n"), "{text}");
    assert!(text.ends_with("    11\tline 11"), "{text}");
    assert_eq!(
        ws.read("src/list.txt"),
        lines.replace("line 7\n", "line seven\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_edit_error_is_distinct_and_says_what_to_do_next() {
    let ws = Workspace::new();
    let path = ws.write("app.py", "x = 1\ny = 2\nx = 1\n");
    let unread = ws.write("unread.py", "a = 1\n");
    ws.write("Config.toml", "k = 1\n");
    let notebook = ws.write(
        "n.ipynb",
        r#"{"cells": [], "nbformat": 4, "nbformat_minor": 5}"#,
    );
    let calls = ws
        .session(
            &[
                read(&path),
                edit(&path, "y = 2", "y = 2"),
                edit(&path, "z = 3", "z = 4"),
                edit(&path, "x = 1", "x = 9"),
                edit(&ws.file("config.toml"), "k = 1", "k = 2"),
                edit(&notebook, "cells", "cels"),
                edit(&unread, "a = 1", "a = 2"),
            ],
            &[],
        )
        .await;
    assert!(
        calls
            .err(1)
            .starts_with("old_string and new_string are identical")
    );
    let not_found = calls.err(2);
    assert!(not_found.starts_with(&format!("old_string was not found in {path}.")));
    assert!(not_found.contains("Read the file again"), "{not_found}");
    let many = calls.err(3);
    assert!(
        many.contains("occurs 2 times in") && many.contains("(starting on lines 1 and 3)"),
        "{many}"
    );
    assert!(many.contains("set replace_all to true"), "{many}");
    let missing = calls.err(4);
    assert!(missing.starts_with("File does not exist:"), "{missing}");
    assert!(
        missing.contains(&format!("Did you mean {}?", ws.file("Config.toml"))),
        "{missing}"
    );
    assert!(missing.contains("empty old_string"), "{missing}");
    assert!(
        calls.err(5).contains("Use NotebookEdit"),
        "{}",
        calls.err(5)
    );
    let never = calls.err(6);
    assert!(
        never.contains("has not been read in this session"),
        "{never}"
    );
    assert!(
        never.contains("Read it first with the Read tool"),
        "{never}"
    );
    // Nothing was changed by the failed calls.
    assert_eq!(ws.read("app.py"), "x = 1\ny = 2\nx = 1\n");
    assert_eq!(ws.read("unread.py"), "a = 1\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_changed_since_it_was_read_must_be_read_again() {
    let ws = Workspace::new();
    let path = ws.write("notes.txt", "draft\n");
    // FsProbe (a test plugin) stands for the user or a formatter changing
    // the file between the model's calls.
    let probe = (
        "FsProbe",
        json!({"op": "write", "path": path, "content": "changed by the user\n"}),
    );
    let root = kaizen_test_artifacts::plugins_root().to_str().unwrap();
    let calls = ws
        .session(
            &[
                read(&path),
                probe,
                edit(&path, "draft", "final"),
                read(&path),
                edit(&path, "changed by the user", "final"),
            ],
            &["--plugins", root],
        )
        .await;
    let changed = calls.err(2);
    assert!(
        changed.contains("has changed since it was last read in this session"),
        "{changed}"
    );
    assert!(changed.contains("Read it again"), "{changed}");
    calls.ok(4);
    assert_eq!(ws.read("notes.txt"), "final\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn read_notes_survive_across_calls_and_edits_note_their_result() {
    let ws = Workspace::new();
    let a = ws.write("a.txt", "one\n");
    let b = ws.write("b.txt", "two\n");
    let calls = ws
        .session(
            &[
                read(&a),
                read(&b),
                edit(&a, "one", "uno"),
                // No read in between: the edit noted what it wrote.
                edit(&a, "uno", "eins"),
                edit(&b, "two", "dos"),
            ],
            &[],
        )
        .await;
    for i in 2..5 {
        calls.ok(i);
    }
    assert_eq!(ws.read("a.txt"), "eins\n");
    assert_eq!(ws.read("b.txt"), "dos\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn replace_all_an_empty_old_string_and_crlf_files() {
    let ws = Workspace::new();
    let many = ws.write("many.rs", "let foo = 1;\nfoo += foo;\n");
    let windows = ws.write("win.txt", "first\r\nsecond\r\nthird\r\n");
    let fresh = ws.file("new/dir/fresh.md");
    let calls = ws
        .session(
            &[
                read(&many),
                (
                    "Edit",
                    json!({"file_path": many, "old_string": "foo", "new_string": "bar", "replace_all": true}),
                ),
                edit(&fresh, "", "# Fresh\n"),
                edit(&fresh, "", "# Again\n"),
                read(&windows),
                edit(&windows, "first\nsecond", "1st\n2nd\n2.5th"),
            ],
            &[],
        )
        .await;
    assert!(
        calls
            .ok(1)
            .contains("All 3 occurrences of old_string were replaced.")
    );
    assert_eq!(ws.read("many.rs"), "let bar = 1;\nbar += bar;\n");
    assert_eq!(calls.ok(2), format!("Created {fresh} (1 line)."));
    assert_eq!(ws.read("new/dir/fresh.md"), "# Fresh\n");
    let again = calls.err(3);
    assert!(again.contains("already has content"), "{again}");
    calls.ok(5);
    assert_eq!(ws.read("win.txt"), "1st\r\n2nd\r\n2.5th\r\nthird\r\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_edit_applies_in_order_all_or_nothing() {
    let ws = Workspace::new();
    let path = ws.write("lib.rs", "fn old_name() {}\nfn caller() { old_name(); }\n");
    let multi = |edits: Value| ("MultiEdit", json!({"file_path": path, "edits": edits}));
    let calls = ws
        .session(
            &[
                read(&path),
                multi(json!([
                    {"old_string": "old_name", "new_string": "new_name", "replace_all": true},
                    {"old_string": "fn caller() { new_name(); }", "new_string": "fn caller() {\n    new_name();\n}"},
                ])),
                multi(json!([
                    {"old_string": "new_name", "new_string": "newer_name", "replace_all": true},
                    {"old_string": "no such text", "new_string": "x"},
                ])),
                multi(json!([])),
            ],
            &[],
        )
        .await;
    let done = calls.ok(1);
    assert!(
        done.starts_with(&format!("Updated {path} with 2 edits:")),
        "{done}"
    );
    assert!(
        done.contains("1. Replaced \"old_name\" with \"new_name\" (2 occurrences)"),
        "{done}"
    );
    let expected = "fn new_name() {}\nfn caller() {\n    new_name();\n}\n";
    assert_eq!(ws.read("lib.rs"), expected);
    let failed = calls.err(2);
    assert!(
        failed.starts_with("Edit 2 of 2 failed: old_string was not found"),
        "{failed}"
    );
    assert!(
        failed.contains("None of the edits were applied"),
        "{failed}"
    );
    assert_eq!(ws.read("lib.rs"), expected);
    // The schema asks for at least one edit.
    assert!(calls.err(3).contains("edits"), "{}", calls.err(3));
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_outside_the_granted_directories_are_refused() {
    let ws = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().canonicalize().unwrap().join("secret.txt");
    std::fs::write(&secret, "keep\n").unwrap();
    let secret = secret.display().to_string();
    let shelf = tempfile::tempdir().unwrap();
    let shelf_dir = shelf.path().canonicalize().unwrap();
    let shelved = shelf_dir.join("book.txt");
    std::fs::write(&shelved, "page\n").unwrap();
    let shelved = shelved.display().to_string();
    // A directory the user's config adds read-only: readable, not
    // writable.
    std::fs::write(
        ws.home.path().join("config.toml"),
        format!(
            "[plugins]\nadd-dirs = [{{ path = {:?}, access = \"read-only\" }}]\n",
            shelf_dir.display().to_string()
        ),
    )
    .unwrap();
    let calls = ws
        .session(
            &[
                read(&secret),
                edit(&secret, "keep", "gone"),
                ("Write", json!({"file_path": secret, "content": "gone\n"})),
                read(&shelved),
                edit(&shelved, "page", "torn"),
            ],
            &[],
        )
        .await;
    assert!(
        calls
            .err(0)
            .contains("outside the directories Kaizen can read")
    );
    let edit_outside = calls.err(1);
    assert!(
        edit_outside.contains("outside the directories Kaizen can change"),
        "{edit_outside}"
    );
    let write_outside = calls.err(2);
    assert!(
        write_outside.contains("outside the directories Kaizen can change"),
        "{write_outside}"
    );
    calls.ok(3);
    let read_only = calls.err(4);
    assert!(
        read_only.contains("cannot be written: permission denied"),
        "{read_only}"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep\n");
    assert_eq!(std::fs::read_to_string(&shelved).unwrap(), "page\n");
}

#[test]
fn the_edit_tools_are_listed_as_a_builtin_with_the_workspace_read_write() {
    let ws = Workspace::new();
    let out = ws.kaizen(&["plugins", "list", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let plugins = list.as_array().unwrap();
    let edit = plugins
        .iter()
        .find(|p| p["name"] == "edit")
        .expect("edit is built in");
    assert_eq!(edit["origin"], "builtin");
    assert_eq!(
        edit["tools"],
        json!(["Write", "Edit", "MultiEdit", "NotebookEdit"])
    );
    assert_eq!(
        edit["granted"]["filesystem"][0]["path"],
        ws.root().to_str().unwrap()
    );
    assert_eq!(edit["granted"]["filesystem"][0]["access"], "read-write");
    let todo = plugins
        .iter()
        .find(|p| p["name"] == "todo")
        .expect("todo is built in");
    assert_eq!(todo["tools"], json!(["TodoWrite"]));
    assert_eq!(todo["granted"]["filesystem"], json!([]));
}
