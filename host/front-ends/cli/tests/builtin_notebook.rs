//! The built-in `NotebookEdit` tool through `kaizen run`: Read a notebook,
//! then replace, insert and delete cells; the file stays valid nbformat.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::workspace::Workspace;
use serde_json::{Value, json};

fn notebook(minor: u64, with_ids: bool) -> String {
    let mut cells = json!([
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["# Analysis\n", "Numbers."]
        },
        {
            "cell_type": "code",
            "execution_count": 7,
            "metadata": {"collapsed": false},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": ["3\n"]}],
            "source": ["print(1 + 2)"]
        }
    ]);
    if with_ids {
        cells[0]["id"] = json!("title");
        cells[1]["id"] = json!("sum");
    }
    json!({
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": minor
    })
    .to_string()
}

fn edit(path: &str, fields: Value) -> (&'static str, Value) {
    let mut input = json!({ "notebook_path": path, "new_source": "" });
    input
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    ("NotebookEdit", input)
}

fn read(path: &str) -> (&'static str, Value) {
    ("Read", json!({ "file_path": path }))
}

#[tokio::test(flavor = "multi_thread")]
async fn cells_are_replaced_inserted_and_deleted_keeping_valid_nbformat() {
    let ws = Workspace::new();
    let path = ws.write("analysis.ipynb", notebook(5, true));
    let calls = ws
        .session(
            &[
                read(&path),
                edit(&path, json!({"cell_id": "sum", "new_source": "print(2 + 2)"})),
                // No new read needed: the last edit noted what it wrote.
                edit(
                    &path,
                    json!({"cell_id": "title", "new_source": "## Setup", "cell_type": "markdown", "edit_mode": "insert"}),
                ),
                edit(&path, json!({"cell_id": "title", "edit_mode": "delete"})),
                read(&path),
            ],
            &[],
        )
        .await;
    assert_eq!(
        calls.ok(1),
        format!("Replaced the source of cell sum (code) in {path}; its old outputs were cleared.")
    );
    let inserted = calls.ok(2);
    assert!(
        inserted.starts_with("Inserted a new markdown cell (id ")
            && inserted.ends_with(&format!("after cell title of {path}; it is cell 2 of 3.")),
        "{inserted}"
    );
    assert_eq!(
        calls.ok(3),
        format!("Deleted cell title (markdown) from {path}; 2 cells are left.")
    );
    let written: Value = serde_json::from_str(&ws.read("analysis.ipynb")).unwrap();
    let cells = written["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["cell_type"], "markdown");
    assert_eq!(cells[0]["source"], json!(["## Setup"]));
    let new_id = cells[0]["id"].as_str().unwrap();
    assert_eq!(new_id.len(), 8, "{new_id}");
    assert!(inserted.contains(new_id), "{inserted}");
    assert_eq!(
        cells[1],
        json!({
            "cell_type": "code",
            "execution_count": null,
            "id": "sum",
            "metadata": {"collapsed": false},
            "outputs": [],
            "source": ["print(2 + 2)"]
        })
    );
    assert_eq!(written["metadata"]["kernelspec"]["name"], "python3");
    assert_eq!(
        (
            written["nbformat"].as_u64(),
            written["nbformat_minor"].as_u64()
        ),
        (Some(4), Some(5))
    );
    // Jupyter's own layout: one-space indent, a final newline.
    assert!(
        ws.read("analysis.ipynb")
            .starts_with("{\n \"cells\": [\n  {\n")
    );
    // Read shows the result.
    let shown = calls.ok(4);
    assert!(
        shown.contains(&format!(
            "<cell id=\"{new_id}\" type=\"markdown\">\n## Setup"
        )),
        "{shown}"
    );
    assert!(
        shown.contains("<cell id=\"sum\" type=\"code\">\nprint(2 + 2)\n</cell>"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cells_without_ids_are_named_as_read_shows_them() {
    let ws = Workspace::new();
    let path = ws.write("old.ipynb", notebook(4, false));
    let calls = ws
        .session(
            &[
                read(&path),
                edit(
                    &path,
                    json!({"cell_id": "cell-1", "new_source": "x = 1", "cell_type": "markdown"}),
                ),
                edit(
                    &path,
                    json!({"new_source": "import os", "cell_type": "code", "edit_mode": "insert"}),
                ),
            ],
            &[],
        )
        .await;
    assert!(calls.ok(0).contains("<cell id=\"cell-1\" type=\"code\">"));
    assert_eq!(
        calls.ok(1),
        format!(
            "Replaced the source of cell cell-1 (markdown) in {path}; it is now a markdown cell."
        )
    );
    assert!(
        calls.ok(2).contains("(id cell-0) at the start"),
        "{}",
        calls.ok(2)
    );
    let written: Value = serde_json::from_str(&ws.read("old.ipynb")).unwrap();
    let cells = written["cells"].as_array().unwrap();
    // nbformat 4.4 has no cell ids: none is added.
    assert!(
        cells.iter().all(|cell| cell.get("id").is_none()),
        "{written}"
    );
    assert_eq!(cells[0]["outputs"], json!([]));
    assert!(cells[2].get("outputs").is_none() && cells[2].get("execution_count").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_notebook_edits_say_what_to_do() {
    let ws = Workspace::new();
    let path = ws.write("n.ipynb", notebook(5, true));
    let script = ws.write("a.py", "print(1)\n");
    let calls = ws
        .session(
            &[
                edit(&path, json!({"cell_id": "sum", "new_source": "1"})),
                read(&path),
                edit(&path, json!({"cell_id": "nope", "edit_mode": "delete"})),
                edit(&path, json!({"new_source": "1"})),
                edit(
                    &path,
                    json!({"cell_id": "sum", "new_source": "1", "edit_mode": "insert"}),
                ),
                edit(&script, json!({"cell_id": "x"})),
                edit(&ws.file("N.ipynb"), json!({"cell_id": "x"})),
                edit(&path, json!({"cell_id": "sum", "edit_mode": "append"})),
            ],
            &[],
        )
        .await;
    assert!(calls.err(0).contains("has not been read in this session"));
    let missing = calls.err(2);
    assert!(
        missing.contains("No cell has the id \"nope\"")
            && missing.contains("Its cells are title, sum."),
        "{missing}"
    );
    assert!(
        calls.err(3).contains("\"replace\" needs cell_id"),
        "{}",
        calls.err(3)
    );
    assert!(
        calls.err(4).contains("\"insert\" needs cell_type"),
        "{}",
        calls.err(4)
    );
    assert!(
        calls.err(5).contains("not a Jupyter notebook"),
        "{}",
        calls.err(5)
    );
    assert!(
        calls.err(6).contains(&format!("Did you mean {path}?")),
        "{}",
        calls.err(6)
    );
    // The schema allows only replace, insert and delete.
    assert!(calls.err(7).contains("edit_mode"), "{}", calls.err(7));
    assert_eq!(ws.read("n.ipynb"), notebook(5, true));
}
