//! The directory layout: sessions written before the storage trait still
//! load, what is written now is byte for byte the same format, and nothing
//! is touched outside the root.

use crate::storage::Storage;
use crate::{FileStorage, Parent, SessionMeta, SessionStore};
use serde_json::{Value, json};
use std::fs;
use std::path::Path;

/// A checkpoint file as the format says, built here by hand: magic,
/// version, compression flag, step, payload length, BLAKE3, payload.
fn checkpoint_file(step: u64, json: &[u8], compressed: bool) -> Vec<u8> {
    let payload = if compressed {
        zstd::bulk::compress(json, 3).unwrap()
    } else {
        json.to_vec()
    };
    let mut bytes = b"KZCKPT\0".to_vec();
    bytes.push(1);
    bytes.push(u8::from(compressed));
    bytes.extend_from_slice(&step.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

/// A line of the kept files' index, as written (`root` absent in older
/// sessions).
fn index_line(step: u64, root: Option<&Path>, path: &Path, object: Option<&str>) -> String {
    let string = |value: &str| serde_json::to_string(value).unwrap();
    let root = root.map_or(String::new(), |root| {
        format!(r#""root":{},"#, string(root.to_str().unwrap()))
    });
    let object = object.map_or("null".into(), string);
    format!(
        r#"{{"step":{step},{root}"path":{},"object":{object}}}"#,
        string(path.to_str().unwrap())
    ) + "\n"
}

const OLD_META: &str = r#"{
  "id": "old-1",
  "started": "2026-01-02T03:04:05.678Z",
  "updated": "2026-01-02T03:05:00.000Z",
  "status": "complete",
  "task": "fix the bug",
  "model": "gpt-x",
  "cwd": "/w",
  "cycles": 2,
  "cost_usd": 0.25,
  "parent": {
    "id": "older",
    "step": 4
  },
  "planner": "react"
}"#;

/// Writes session `old-1` under `sessions` as Kaizen wrote sessions before
/// the storage trait, with files kept from `ws`.
fn write_old_session(sessions: &Path, ws: &Path) {
    let dir = sessions.join("old-1");
    fs::create_dir_all(dir.join("checkpoints")).unwrap();
    fs::create_dir_all(dir.join("files/objects")).unwrap();
    fs::write(dir.join("meta.json"), OLD_META).unwrap();
    fs::write(dir.join("events.jsonl"), "{\"n\":1}\n{\"n\":2}\n").unwrap();
    let checkpoints = dir.join("checkpoints");
    fs::write(
        checkpoints.join("000000000003.ckpt"),
        checkpoint_file(7, br#"{"at":7}"#, false),
    )
    .unwrap();
    fs::write(
        checkpoints.join("000000000004.ckpt"),
        checkpoint_file(9, br#"{"at":9}"#, true),
    )
    .unwrap();
    // A temporary file a crash left behind.
    fs::write(checkpoints.join(".tmp-1-2-0"), "half").unwrap();
    let hash = blake3::hash(b"old a").to_hex().to_string();
    fs::write(dir.join("files/objects").join(&hash), "old a").unwrap();
    let index = index_line(2, None, &ws.join("a.txt"), Some(&hash))
        + &index_line(3, Some(ws), &ws.join("b.txt"), None);
    fs::write(dir.join("files/index.jsonl"), index).unwrap();
}

#[test]
fn a_session_written_in_todays_format_still_loads() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path().canonicalize().unwrap();
    let sessions = home.path().join("sessions");
    write_old_session(&sessions, &ws);
    let store = SessionStore::open(&sessions).unwrap();

    let expected = SessionMeta {
        id: "old-1".into(),
        started: "2026-01-02T03:04:05.678Z".into(),
        updated: "2026-01-02T03:05:00.000Z".into(),
        status: "complete".into(),
        cycles: 2,
        cost_usd: 0.25,
        parent: Some(Parent {
            id: "older".into(),
            step: 4,
        }),
        planner: Some("react".into()),
        ..SessionMeta::new("old-1", "fix the bug", "gpt-x", "/w")
    };
    assert_eq!(store.list().unwrap(), [expected]);
    assert_eq!(store.resolve("last").unwrap(), "old-1");
    let dir = sessions.join("old-1");
    assert_eq!(
        store.transcript_path("old-1").unwrap(),
        dir.join("events.jsonl")
    );

    let read = store.read_events::<Value>("old-1").unwrap();
    assert_eq!(read.events, [json!({"n": 1}), json!({"n": 2})]);

    let listed = store.list_checkpoints("old-1").unwrap();
    let steps: Vec<_> = listed.iter().map(|c| c.step).collect();
    assert_eq!(steps, [Some(7), Some(9)]);
    assert_eq!(listed[0].path, dir.join("checkpoints/000000000003.ckpt"));
    let latest = store.load_latest::<Value>("old-1").unwrap();
    assert!(latest.warnings.is_empty(), "{:?}", latest.warnings);
    let latest = latest.loaded.unwrap();
    assert_eq!((latest.step, latest.value), (9, json!({"at": 9})));
    assert_eq!(latest.path, dir.join("checkpoints/000000000004.ckpt"));
    let earlier = store.load_at::<Value>("old-1", 8).unwrap().loaded.unwrap();
    assert_eq!((earlier.step, earlier.value), (7, json!({"at": 7})));

    // The older index line has no root: the workspace given is used.
    fs::write(ws.join("a.txt"), "new a").unwrap();
    fs::write(ws.join("b.txt"), "made at step 3").unwrap();
    let plan = store.rewind_plan("old-1", 2).unwrap();
    assert_eq!(plan.len(), 2);
    assert_eq!(plan[0].root, None);
    store.restore("old-1", &plan, &ws).unwrap();
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "old a");
    assert!(!ws.join("b.txt").exists());

    // Writing goes on where the session was.
    store
        .log_writer("old-1")
        .unwrap()
        .append(&json!({"n": 3}))
        .unwrap();
    let log = fs::read_to_string(dir.join("events.jsonl")).unwrap();
    assert_eq!(log, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
    store
        .write_checkpoint("old-1", 10, &json!({"at": 10}))
        .unwrap();
    assert!(dir.join("checkpoints/000000000005.ckpt").is_file());
}

#[test]
fn what_is_written_now_is_the_same_format() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path().canonicalize().unwrap();
    let sessions = home.path().join("sessions");
    let store = SessionStore::open(&sessions).unwrap();
    let meta = SessionMeta::new("s", "a task", "m", "/w");
    store.create(&meta).unwrap();
    let dir = sessions.join("s");
    let written = fs::read_to_string(dir.join("meta.json")).unwrap();
    assert!(
        written.starts_with("{\n  \"id\": \"s\",\n  \"started\": "),
        "{written}"
    );
    assert_eq!(written, serde_json::to_string_pretty(&meta).unwrap());

    store
        .log_writer("s")
        .unwrap()
        .append(&json!({"n": 1}))
        .unwrap();
    assert_eq!(fs::read(dir.join("events.jsonl")).unwrap(), b"{\"n\":1}\n");

    let state = json!({"messages": ["hi"]});
    let json = serde_json::to_vec(&state).unwrap();
    store.write_checkpoint("s", 5, &state).unwrap();
    store
        .clone()
        .with_checkpoints(5, 0)
        .write_checkpoint("s", 6, &state)
        .unwrap();
    let checkpoints = dir.join("checkpoints");
    assert_eq!(
        fs::read(checkpoints.join("000000000001.ckpt")).unwrap(),
        checkpoint_file(5, &json, false)
    );
    assert_eq!(
        fs::read(checkpoints.join("000000000002.ckpt")).unwrap(),
        checkpoint_file(6, &json, true)
    );

    let file = ws.join("a.txt");
    fs::write(&file, "before").unwrap();
    store.backup_file("s", 1, &ws, &file).unwrap();
    store.backup_file("s", 2, &ws, &ws.join("gone")).unwrap();
    let hash = blake3::hash(b"before").to_hex().to_string();
    assert_eq!(
        fs::read_to_string(dir.join("files/index.jsonl")).unwrap(),
        index_line(1, Some(&ws), &file, Some(&hash))
            + &index_line(2, Some(&ws), &ws.join("gone"), None)
    );
    assert_eq!(
        fs::read(dir.join("files/objects").join(&hash)).unwrap(),
        b"before"
    );

    #[cfg(unix)]
    for private in [
        &sessions,
        &checkpoints,
        &dir.join("files"),
        &dir.join("files/objects"),
    ] {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(private).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", private.display());
    }
}

/// Ids and names that could lead out of the root are refused by the file
/// storage itself, whoever calls it.
#[test]
fn the_file_storage_touches_nothing_outside_its_root() {
    let home = tempfile::tempdir().unwrap();
    let storage = FileStorage::open(home.path().join("sessions")).unwrap();
    storage.create("s", b"{}").unwrap();
    fs::write(home.path().join("outside"), "kept").unwrap();
    for id in ["", "..", "../s", "s/..", ".hidden", "a/b", "/etc"] {
        assert!(storage.create(id, b"{}").is_err(), "{id:?}");
        assert!(storage.read_meta(id).is_err(), "{id:?}");
        assert!(storage.write_meta(id, b"{}").is_err(), "{id:?}");
        assert!(storage.remove(id).is_err(), "{id:?}");
        assert!(storage.local_dir(id).is_none(), "{id:?}");
    }
    for name in ["", "..", "../../../outside", "a/b", ".tmp", "x.y"] {
        assert!(storage.has_object("s", name).is_err(), "{name:?}");
        assert!(storage.read_object("s", name).is_err(), "{name:?}");
        assert!(
            storage.write_object("s", name, b"evil").is_err(),
            "{name:?}"
        );
    }
    assert_eq!(
        fs::read_to_string(home.path().join("outside")).unwrap(),
        "kept"
    );
    let names: Vec<_> = fs::read_dir(home.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(storage.sessions().unwrap(), ["s"]);
}
