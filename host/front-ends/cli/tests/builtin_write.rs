//! The built-in `Write` tool through `kaizen run`: creating files, and the
//! rule that an existing file is overwritten only after a fresh Read.

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

fn write(path: &str, content: &str) -> (&'static str, Value) {
    ("Write", json!({ "file_path": path, "content": content }))
}

#[tokio::test(flavor = "multi_thread")]
async fn new_files_and_their_directories_are_created_without_a_read() {
    let ws = Workspace::new();
    let path = ws.file("docs/guide/intro.md");
    let calls = ws
        .session(
            &[
                write(&path, "# Intro\n\nHello.\n"),
                // Written in this session: it may be edited without a read.
                (
                    "Edit",
                    json!({"file_path": path, "old_string": "Hello.", "new_string": "Hello, world."}),
                ),
            ],
            &[],
        )
        .await;
    assert_eq!(calls.ok(0), format!("Created {path} (3 lines)."));
    calls.ok(1);
    assert_eq!(ws.read("docs/guide/intro.md"), "# Intro\n\nHello, world.\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_existing_file_is_overwritten_only_after_a_fresh_read() {
    let ws = Workspace::new();
    let path = ws.write("config.json", "{\"a\": 1}\n");
    let probe = (
        "FsProbe",
        json!({"op": "write", "path": path, "content": "{\"a\": 2}\n"}),
    );
    let root = kaizen_test_artifacts::plugins_root().to_str().unwrap();
    let calls = ws
        .session(
            &[
                write(&path, "{}\n"),
                read(&path),
                // Someone else changes the file after the read.
                probe,
                write(&path, "{}\n"),
                read(&path),
                write(&path, "{\"a\": 3}\n"),
            ],
            &["--plugins", root],
        )
        .await;
    let never = calls.err(0);
    assert!(
        never.starts_with(&format!("{path} has not been read in this session")),
        "{never}"
    );
    assert!(never.contains("Read it first"), "{never}");
    let changed = calls.err(3);
    assert!(
        changed.starts_with(&format!(
            "{path} has changed since it was last read in this session"
        )),
        "{changed}"
    );
    assert!(changed.contains("Read it again"), "{changed}");
    assert_eq!(
        calls.ok(5),
        format!("The file {path} has been overwritten with the new content (1 line).")
    );
    assert_eq!(ws.read("config.json"), "{\"a\": 3}\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_outside_the_granted_directories_and_to_directories_are_refused() {
    let ws = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().canonicalize().unwrap().join("new.txt");
    let added = tempfile::tempdir().unwrap();
    let added_dir = added.path().canonicalize().unwrap();
    let in_added = added_dir.join("sub/ok.txt").display().to_string();
    ws.write("src/keep.txt", "x");
    let calls = ws
        .session(
            &[
                write(&target.display().to_string(), "nope\n"),
                write(&ws.file("src"), "nope\n"),
                write("", "nope\n"),
                // A directory added with --add-dir is writable.
                write(&in_added, "fine\n"),
            ],
            &["--add-dir", added_dir.to_str().unwrap()],
        )
        .await;
    let outside_err = calls.err(0);
    assert!(
        outside_err.contains("is outside the directories Kaizen can change"),
        "{outside_err}"
    );
    assert!(outside_err.contains("--add-dir"), "{outside_err}");
    assert!(!target.exists());
    // Nothing was created inside the workspace in its place either.
    assert!(
        !ws.path(target.strip_prefix("/").unwrap().to_str().unwrap())
            .exists()
    );
    assert!(calls.err(1).contains("is a directory"), "{}", calls.err(1));
    assert!(
        calls.err(2).contains("`file_path` is empty"),
        "{}",
        calls.err(2)
    );
    calls.ok(3);
    assert_eq!(
        std::fs::read_to_string(added_dir.join("sub/ok.txt")).unwrap(),
        "fine\n"
    );
}
