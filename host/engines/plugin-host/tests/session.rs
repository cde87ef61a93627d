//! The `session` host interface: a plugin reads and writes the notes of
//! the call it serves, whether it gets a fresh instance per call or keeps
//! one per session.

mod common;

use common::{Harness, text};
use kaizen_tools::{
    CallContext, FileHistory, FileHistoryLink, FileRecord, Notes, SessionNotes, ToolRegistry,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;

fn with_notes(ctx: CallContext, notes: &Arc<SessionNotes>) -> CallContext {
    CallContext {
        notes: notes.clone(),
        ..ctx
    }
}

async fn call(registry: &ToolRegistry, ctx: &CallContext, input: Value) -> Value {
    let out = text(registry.call(ctx, "Notes", &input.to_string()).await);
    serde_json::from_str(&out).unwrap()
}

#[tokio::test]
async fn a_plugin_reads_and_writes_the_notes_of_its_call() {
    let h = Harness::new();
    let registry = h.registry(&["notes"]).await;
    let notes = Arc::new(SessionNotes::default());
    let ctx = with_notes(h.ctx("s"), &notes);
    let first = call(
        &registry,
        &ctx,
        json!({"path": "/w/a", "hash": "h1", "todos": [{"content": "x"}]}),
    )
    .await;
    assert_eq!(first, json!({"seen": null, "todos": []}));
    assert_eq!(
        notes.file_note("/w/a"),
        Some(FileRecord {
            hash: "h1".into(),
            mtime_ms: 42
        })
    );
    assert!(notes.todos_set());
    let second = call(&registry, &ctx, json!({"path": "/w/a"})).await;
    assert_eq!(
        second,
        json!({"seen": ["h1", 42], "todos": [{"content": "x"}]})
    );
}

#[tokio::test]
async fn a_stateful_instance_sees_the_notes_each_call_brings() {
    let h = Harness::new();
    let registry = h.registry(&["notes"]).await;
    // The same session across two loop steps: each step hands over the
    // session's notes anew (restored from its state).
    let step_one = Arc::new(SessionNotes::default());
    call(
        &registry,
        &with_notes(h.ctx("s"), &step_one),
        json!({"path": "/w/a", "hash": "one"}),
    )
    .await;
    let step_two = Arc::new(SessionNotes::new(Notes {
        files: step_one.take().files,
        todos: vec![json!("restored")],
        active_skill: None,
    }));
    let seen = call(
        &registry,
        &with_notes(h.ctx("s"), &step_two),
        json!({"path": "/w/a"}),
    )
    .await;
    assert_eq!(seen, json!({"seen": ["one", 42], "todos": ["restored"]}));
    // Another session's notes are its own, though the plugin instance of
    // this one is still alive.
    let other = Arc::new(SessionNotes::default());
    let seen = call(
        &registry,
        &with_notes(h.ctx("t"), &other),
        json!({"path": "/w/a"}),
    )
    .await;
    assert_eq!(seen, json!({"seen": null, "todos": []}));
}

#[tokio::test]
async fn todo_items_are_kept_as_the_plugin_gave_them() {
    let h = Harness::new();
    let registry = h.registry(&["notes"]).await;
    let notes = Arc::new(SessionNotes::default());
    notes.set_todos(vec![json!("old")]);
    let ctx = with_notes(h.ctx("s"), &notes);
    call(
        &registry,
        &ctx,
        json!({"path": "/p", "todos": ["a", {"b": 1}]}),
    )
    .await;
    assert_eq!(notes.todos(), [json!("a"), json!({"b": 1})]);
}

/// Remembers the paths it was asked to keep.
#[derive(Default)]
struct Kept(Mutex<Vec<PathBuf>>);

impl FileHistory for Kept {
    fn keep(&self, _root: &Path, path: &Path) -> Result<(), String> {
        self.0.lock().unwrap().push(path.to_path_buf());
        Ok(())
    }
}

#[tokio::test]
async fn only_files_the_plugin_may_write_are_kept_before_a_change() {
    let h = Harness::new();
    let registry = h.registry(&["notes"]).await;
    let kept = Arc::new(Kept::default());
    let ctx = CallContext {
        history: FileHistoryLink::new(kept.clone()),
        ..h.ctx("s")
    };
    let ws = h.workspace();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "x").unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("link")).unwrap();
    let answers = [
        (ws.join("a.txt"), true),
        (ws.join("new/dir/b.txt"), true),
        (secret.clone(), false),
        (ws.join("link"), false),
        (ws.join("../escape"), false),
        (PathBuf::from("relative.txt"), false),
    ];
    for (path, allowed) in &answers {
        let report = call(
            &registry,
            &ctx,
            json!({"path": "/w/a", "keep": path.to_string_lossy()}),
        )
        .await;
        if *allowed {
            assert_eq!(report["kept"], "kept", "{path:?}: {report}");
        } else {
            let why = report["kept"]["error"].as_str().unwrap_or_default();
            assert!(
                why.contains("outside the directories this plugin may write")
                    || why.contains("not an absolute path"),
                "{path:?}: {report}"
            );
        }
    }
    assert_eq!(
        *kept.0.lock().unwrap(),
        [ws.join("a.txt"), ws.join("new/dir/b.txt")]
    );
}
