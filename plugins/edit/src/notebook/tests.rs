use super::*;
use kaizen_sdk::session::fingerprint;
use std::fs;

fn notebook(minor: u64) -> Value {
    json!({
        "cells": [
            {
                "cell_type": "markdown",
                "id": "intro",
                "metadata": {"tags": ["keep"]},
                "source": ["# Title\n", "Some text"]
            },
            {
                "cell_type": "code",
                "id": "calc",
                "execution_count": 3,
                "metadata": {},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["2\n"]}],
                "source": ["print(1 + 1)"]
            }
        ],
        "metadata": {"kernelspec": {"name": "python3"}, "custom": {"x": 1}},
        "nbformat": 4,
        "nbformat_minor": minor
    })
}

fn edit(cell_id: Option<&str>, source: &str, kind: Option<Kind>, mode: Mode) -> CellEdit {
    CellEdit {
        cell_id: cell_id.map(str::to_owned),
        new_source: source.to_owned(),
        kind,
        mode,
    }
}

fn ids(taken: &HashSet<String>) -> String {
    format!("new{}", taken.len())
}

#[test]
fn replacing_a_code_cell_clears_its_outputs_and_keeps_other_fields() {
    let mut nb = notebook(5);
    let summary = apply(
        &mut nb,
        &edit(Some("calc"), "x = 2\nx", None, Mode::Replace),
        &mut ids,
    )
    .unwrap();
    let cell = &nb["cells"][1];
    assert_eq!(cell["source"], json!(["x = 2\n", "x"]));
    assert_eq!(cell["outputs"], json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
    assert_eq!(nb["metadata"]["custom"]["x"], 1);
    assert_eq!(
        summary.text("/w/n.ipynb"),
        "Replaced the source of cell calc (code) in /w/n.ipynb; its old outputs were cleared."
    );
}

#[test]
fn changing_a_cells_type_keeps_it_valid() {
    let mut nb = notebook(5);
    apply(
        &mut nb,
        &edit(
            Some("calc"),
            "# Now prose",
            Some(Kind::Markdown),
            Mode::Replace,
        ),
        &mut ids,
    )
    .unwrap();
    let cell = nb["cells"][1].as_object().unwrap();
    assert_eq!(cell["cell_type"], "markdown");
    assert!(!cell.contains_key("outputs") && !cell.contains_key("execution_count"));
    apply(
        &mut nb,
        &edit(Some("intro"), "1", Some(Kind::Code), Mode::Replace),
        &mut ids,
    )
    .unwrap();
    let cell = nb["cells"][0].as_object().unwrap();
    assert_eq!(cell["outputs"], json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
    assert_eq!(cell["metadata"]["tags"], json!(["keep"]));
}

#[test]
fn inserted_cells_get_ids_from_nbformat_4_5_and_the_right_place() {
    let mut nb = notebook(5);
    let summary = apply(
        &mut nb,
        &edit(Some("intro"), "y = 3", Some(Kind::Code), Mode::Insert),
        &mut ids,
    )
    .unwrap();
    assert_eq!(
        nb["cells"][1],
        json!({
            "cell_type": "code",
            "execution_count": null,
            "id": "new2",
            "metadata": {},
            "outputs": [],
            "source": ["y = 3"]
        })
    );
    assert!(
        summary
            .text("/n.ipynb")
            .contains("new code cell (id new2) after cell intro")
    );
    assert!(summary.text("/n.ipynb").contains("it is cell 2 of 3"));
    apply(
        &mut nb,
        &edit(None, "top", Some(Kind::Markdown), Mode::Insert),
        &mut ids,
    )
    .unwrap();
    assert_eq!(nb["cells"][0]["source"], json!(["top"]));
    // Before nbformat 4.5 cells have no ids, and Read names them cell-N.
    let mut old = notebook(4);
    let summary = apply(
        &mut old,
        &edit(None, "z", Some(Kind::Markdown), Mode::Insert),
        &mut ids,
    )
    .unwrap();
    assert!(old["cells"][0].get("id").is_none());
    assert!(
        summary
            .text("/n.ipynb")
            .contains("cell (id cell-0) at the start")
    );
}

#[test]
fn deleting_works_by_id_or_by_reads_cell_n_label() {
    let mut nb = notebook(5);
    let summary = apply(
        &mut nb,
        &edit(Some("cell-0"), "", None, Mode::Delete),
        &mut ids,
    )
    .unwrap();
    assert_eq!(
        summary.text("/n.ipynb"),
        "Deleted cell intro (markdown) from /n.ipynb; 1 cell is left."
    );
    assert_eq!(nb["cells"][0]["id"], "calc");
}

#[test]
fn missing_cells_and_incomplete_input_are_explained() {
    let mut nb = notebook(5);
    let err = apply(
        &mut nb,
        &edit(Some("nope"), "", None, Mode::Delete),
        &mut ids,
    )
    .unwrap_err();
    let message = err.into_error("/n.ipynb").message().to_owned();
    assert!(message.contains("No cell has the id \"nope\""), "{message}");
    assert!(message.contains("Its cells are intro, calc."), "{message}");
    let err = apply(&mut nb, &edit(None, "x", None, Mode::Replace), &mut ids).unwrap_err();
    assert!(matches!(err, Refusal::Input(ref m) if m.contains("needs cell_id")));
    let err = apply(&mut nb, &edit(None, "x", None, Mode::Insert), &mut ids).unwrap_err();
    assert!(matches!(err, Refusal::Input(ref m) if m.contains("needs cell_type")));
    let mut v3 = json!({"nbformat": 3, "worksheets": []});
    let err = apply(
        &mut v3,
        &edit(None, "x", Some(Kind::Code), Mode::Insert),
        &mut ids,
    );
    assert!(matches!(err, Err(Refusal::NotNotebook(ref m)) if m.contains("nbformat 3")));
}

#[test]
fn string_sources_stay_strings() {
    let mut nb = json!({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "a\nb"}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 2});
    apply(
        &mut nb,
        &edit(Some("cell-0"), "c\nd", None, Mode::Replace),
        &mut ids,
    )
    .unwrap();
    assert_eq!(nb["cells"][0]["source"], "c\nd");
}

#[test]
fn the_file_is_written_like_jupyter_and_needs_a_fresh_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.ipynb");
    fs::write(&path, notebook(5).to_string()).unwrap();
    let op = edit(Some("intro"), "# New title", None, Mode::Replace);
    let err = edit_file(&path, &op, None).err().unwrap();
    assert!(err.message().contains("has not been read"), "{err}");
    let note = fingerprint(&path).unwrap();
    let done = edit_file(&path, &op, Some(&note)).unwrap();
    let written = fs::read_to_string(&path).unwrap();
    assert!(
        written.starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\""),
        "{written}"
    );
    assert!(written.ends_with("}\n"));
    assert_eq!(done.record, fingerprint(&path).unwrap());
    let reparsed: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(reparsed["cells"][0]["source"], json!(["# New title"]));
    let err = edit_file(&dir.path().join("a.py"), &op, None)
        .err()
        .unwrap();
    assert!(err.message().contains("not a Jupyter notebook"), "{err}");
}

#[test]
fn random_ids_avoid_taken_ones() {
    let first = random_id(&HashSet::new());
    assert_eq!(first.len(), 8);
    let taken: HashSet<String> = [first.clone()].into();
    assert_ne!(random_id(&taken), first);
}
