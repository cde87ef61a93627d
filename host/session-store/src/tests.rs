use super::*;
use serde_json::{Value, json};

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(dir.path().join("sessions")).unwrap();
    (dir, store)
}

fn meta(id: &str, started: &str) -> SessionMeta {
    SessionMeta {
        started: started.into(),
        updated: started.into(),
        ..SessionMeta::new(id, "a task", "m", "/w")
    }
}

fn with_session(id: &str) -> (tempfile::TempDir, SessionStore) {
    let (dir, store) = store();
    store.create(&meta(id, &now())).unwrap();
    (dir, store)
}

fn checkpoint_path(store: &SessionStore, id: &str, n: usize) -> PathBuf {
    store.list_checkpoints(id).unwrap()[n].path.clone()
}

#[test]
fn metadata_is_created_updated_listed_and_resolved() {
    let (_dir, store) = store();
    store
        .create(&meta("old", "2026-01-01T00:00:00.000Z"))
        .unwrap();
    store
        .create(&meta("new", "2026-02-01T00:00:00.000Z"))
        .unwrap();
    assert!(matches!(
        store.create(&meta("new", "x")),
        Err(StoreError::Exists(_))
    ));
    store
        .update_meta("old", |m| {
            m.status = "complete".into();
            m.cycles = 3;
        })
        .unwrap();
    let listed: Vec<String> = store.list().unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(listed, ["new", "old"]);
    assert_eq!(store.meta("old").unwrap().cycles, 3);
    assert_eq!(store.resolve("last").unwrap(), "new");
    assert_eq!(store.resolve("old").unwrap(), "old");
    let err = store.resolve("nope").unwrap_err().to_string();
    assert!(err.contains("kaizen sessions list"), "{err}");
}

#[test]
fn hostile_ids_are_refused() {
    let (_dir, store) = store();
    for id in ["", "..", "../x", "a/b", ".hidden", "a\\b", "a b"] {
        assert!(
            matches!(store.create(&meta(id, "t")), Err(StoreError::InvalidId(_))),
            "{id:?}"
        );
        assert!(store.meta(id).is_err(), "{id:?}");
    }
    assert!(store.remove("..").is_err());
}

#[test]
fn events_round_trip_and_a_torn_last_line_is_left_out_then_cut() {
    let (_dir, store) = with_session("s");
    let mut log = store.log_writer("s").unwrap();
    log.append(&json!({"n": 1})).unwrap();
    log.append(&json!({"n": 2})).unwrap();
    drop(log);
    let path = store.dir("s").unwrap().join("events.jsonl");
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"n": 3, "cut"#);
    fs::write(&path, &bytes).unwrap();

    let read = store.read_events::<Value>("s").unwrap();
    assert_eq!(read.events, [json!({"n": 1}), json!({"n": 2})]);
    assert!(read.torn_tail.unwrap().contains("cut short"));

    // Appending again first cuts the torn line off.
    let mut log = store.log_writer("s").unwrap();
    log.append(&json!({"n": 3})).unwrap();
    let read = store.read_events::<Value>("s").unwrap();
    assert_eq!(read.events.len(), 3);
    assert_eq!(read.torn_tail, None);
}

#[test]
fn a_damaged_line_before_the_last_is_an_error_naming_it() {
    let (_dir, store) = with_session("s");
    let path = store.dir("s").unwrap().join("events.jsonl");
    fs::write(&path, "{\"n\":1}\n{garbage\n{\"n\":3}\n").unwrap();
    let err = store.read_events::<Value>("s").unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn checkpoints_round_trip_raw_and_compressed() {
    let (_dir, store) = with_session("s");
    let small = json!({"messages": ["hi"]});
    let big = json!({"messages": vec!["a fairly long line of conversation"; 10_000]});
    let small_size = store.write_checkpoint("s", 1, &small).unwrap();
    let big_size = store.write_checkpoint("s", 2, &big).unwrap();
    assert!(
        big_size < serde_json::to_vec(&big).unwrap().len() as u64 / 5,
        "compressed: {big_size}"
    );
    assert!(small_size > 0);
    let latest = store.load_latest::<Value>("s").unwrap();
    let loaded = latest.loaded.unwrap();
    assert_eq!((loaded.step, loaded.value), (2, big));
    assert!(latest.warnings.is_empty());
    let earlier = store.load_at::<Value>("s", 1).unwrap().loaded.unwrap();
    assert_eq!((earlier.step, earlier.value), (1, small));
    assert!(store.load_at::<Value>("s", 0).unwrap().loaded.is_none());
}

#[test]
fn a_truncated_or_bit_flipped_checkpoint_is_passed_over_with_a_warning() {
    let (_dir, store) = with_session("s");
    for step in [4, 8, 12] {
        store
            .write_checkpoint("s", step, &json!({ "step": step }))
            .unwrap();
    }
    // The newest is cut short, the middle one has a flipped bit.
    let newest = checkpoint_path(&store, "s", 2);
    let bytes = fs::read(&newest).unwrap();
    fs::write(&newest, &bytes[..bytes.len() - 3]).unwrap();
    let middle = checkpoint_path(&store, "s", 1);
    let mut bytes = fs::read(&middle).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x10;
    fs::write(&middle, &bytes).unwrap();

    let recovery = store.load_latest::<Value>("s").unwrap();
    let loaded = recovery.loaded.unwrap();
    assert_eq!(loaded.step, 4);
    assert_eq!(recovery.warnings.len(), 2, "{:?}", recovery.warnings);
    assert!(recovery.warnings[0].contains("truncated"));
    assert!(recovery.warnings[1].contains("checksum mismatch"));
    assert!(recovery.warnings[0].contains("using the checkpoint at step 4 instead"));

    // With every checkpoint damaged, nothing loads and the warning says
    // the log alone is left.
    fs::write(checkpoint_path(&store, "s", 0), b"KZ").unwrap();
    let recovery = store.load_latest::<Value>("s").unwrap();
    assert!(recovery.loaded.is_none());
    assert!(recovery.warnings[2].contains("event log alone"));
}

#[test]
fn retention_keeps_the_last_k() {
    let (_dir, store) = with_session("s");
    let store = store.with_checkpoints(3, 1 << 20);
    for step in 1..=7 {
        store.write_checkpoint("s", step, &json!(step)).unwrap();
    }
    let steps: Vec<Option<u64>> = store
        .list_checkpoints("s")
        .unwrap()
        .iter()
        .map(|c| c.step)
        .collect();
    assert_eq!(steps, [Some(5), Some(6), Some(7)]);
}

#[test]
fn secrets_never_reach_any_file() {
    let (dir, store) = store();
    let secret = "sk-live-0123456789abcdef";
    let store = store.with_secrets([secret.to_string(), "short".into()]);
    let mut m = meta("s", &now());
    m.task = format!("use {secret}");
    store.create(&m).unwrap();
    store
        .log_writer("s")
        .unwrap()
        .append(&json!({ "said": secret }))
        .unwrap();
    store
        .write_checkpoint("s", 1, &json!({ "key": secret, "short": "short" }))
        .unwrap();
    let big = json!({ "keys": vec![secret; 20_000] });
    store.write_checkpoint("s", 2, &big).unwrap();
    for entry in walk(dir.path()) {
        let bytes = fs::read(&entry).unwrap();
        let plain = if entry.extension().is_some_and(|e| e == "ckpt") && bytes[8] == 1 {
            zstd::stream::decode_all(&bytes[57..]).unwrap()
        } else {
            bytes
        };
        assert!(
            memchr::memmem::find(&plain, secret.as_bytes()).is_none(),
            "{}",
            entry.display()
        );
    }
    let loaded = store.load_at::<Value>("s", 1).unwrap().loaded.unwrap();
    assert_eq!(loaded.value, json!({"key": REDACTED, "short": "short"}));
    assert!(store.meta("s").unwrap().task.contains(REDACTED));
}

/// A key that a tool's output carries encoded (in a basic-auth header, a
/// URL, escaped JSON) is redacted too: what is kept cannot be decoded back
/// to it.
#[test]
fn encoded_secrets_are_redacted() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let (_dir, store) = store();
    let secret = "sk-live-0123456789abcdef/+x";
    let store = store.with_secrets([secret.to_string()]);
    // Each leak, and the text that must not survive in it.
    let mut leaks: Vec<(String, String)> = Vec::new();
    for prefix in ["user:", "ab:", "a:"] {
        for blob in [
            STANDARD.encode(format!("{prefix}{secret}:tail")),
            URL_SAFE.encode(format!("{prefix}{secret}")),
        ] {
            let middle = blob[8..blob.len() - 8].to_string();
            leaks.push((format!("Authorization: Basic {blob}"), middle));
        }
    }
    leaks.push((
        "https://host/?key=sk-live-0123456789abcdef%2F%2Bx".into(),
        "0123456789abcdef".into(),
    ));
    leaks.push((
        format!("{{\"k\": {}}}", serde_json::to_string(secret).unwrap()),
        "0123456789abcdef".into(),
    ));
    for (leak, gone) in leaks {
        let kept = String::from_utf8(store.redact(leak.clone().into_bytes())).unwrap();
        assert!(kept.contains(REDACTED), "{leak} -> {kept}");
        assert!(!kept.contains(&gone), "{leak} -> {kept}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn rewind_restores_files_byte_for_byte_and_removes_new_ones() {
    let (_dir, store) = with_session("s");
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let text = root.join("a.txt");
    let binary = root.join("b.bin");
    let created = root.join("new/c.txt");
    let original_binary: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    fs::write(&text, "one\r\n").unwrap();
    fs::write(&binary, &original_binary).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&text, fs::Permissions::from_mode(0o751)).unwrap();
    }

    // Step 2 changes a.txt and creates c.txt; step 3 changes both files.
    store.backup_file("s", 2, &root, &text).unwrap();
    fs::write(&text, "two\n").unwrap();
    store.backup_file("s", 2, &root, &created).unwrap();
    fs::create_dir_all(created.parent().unwrap()).unwrap();
    fs::write(&created, "made").unwrap();
    store.backup_file("s", 3, &root, &text).unwrap();
    fs::write(&text, "three\n").unwrap();
    store.backup_file("s", 3, &root, &binary).unwrap();
    fs::write(&binary, b"changed").unwrap();

    // To before step 3: a.txt as step 2 left it, b.bin as it was.
    let plan = store.rewind_plan("s", 3).unwrap();
    assert_eq!(plan.len(), 2);
    store.restore("s", &plan, &root).unwrap();
    assert_eq!(fs::read_to_string(&text).unwrap(), "two\n");
    assert_eq!(fs::read(&binary).unwrap(), original_binary);
    assert!(created.exists());

    // To before step 1: everything as it was, c.txt gone.
    let plan = store.rewind_plan("s", 1).unwrap();
    store.restore("s", &plan, &root).unwrap();
    assert_eq!(fs::read(&text).unwrap(), b"one\r\n");
    assert!(!created.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&text).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }
}

#[test]
fn a_damaged_kept_content_is_not_restored() {
    let (_dir, store) = with_session("s");
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let file = root.join("a.txt");
    fs::write(&file, "before").unwrap();
    store.backup_file("s", 1, &root, &file).unwrap();
    fs::write(&file, "after").unwrap();
    let plan = store.rewind_plan("s", 1).unwrap();
    let object = store
        .dir("s")
        .unwrap()
        .join("files/objects")
        .join(plan[0].object.as_ref().unwrap());
    fs::write(&object, "tampered").unwrap();
    let err = store.restore("s", &plan, &root).unwrap_err().to_string();
    assert!(err.contains("damaged"), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "after");
}

/// The attack on rewind: a session replaces a directory it wrote in with
/// a link to somewhere else (`~/.ssh`, here a directory outside the
/// workspace), then asks the user to rewind. Nothing outside is written
/// or removed; the file outside keeps its content.
#[test]
fn a_rewind_through_a_swapped_directory_is_refused() {
    let (_dir, store) = with_session("s");
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    fs::create_dir(root.join("keys")).unwrap();
    let planted = root.join("keys/authorized_keys");
    fs::write(&planted, "ssh-ed25519 ATTACKER").unwrap();
    store.backup_file("s", 1, &root, &planted).unwrap();
    let created = root.join("keys/new");
    store.backup_file("s", 1, &root, &created).unwrap();

    fs::remove_dir_all(root.join("keys")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("keys")).unwrap();
    fs::write(outside.path().join("authorized_keys"), "ssh-ed25519 USER").unwrap();
    fs::write(outside.path().join("new"), "the user's").unwrap();
    let plan = store.rewind_plan("s", 1).unwrap();
    assert!(store.restore("s", &plan, &root).is_err());
    assert_eq!(
        fs::read_to_string(outside.path().join("authorized_keys")).unwrap(),
        "ssh-ed25519 USER"
    );
    assert_eq!(
        fs::read_to_string(outside.path().join("new")).unwrap(),
        "the user's"
    );
    // Keeping a file through the link is refused too.
    assert!(
        store
            .backup_file("s", 2, &root, &root.join("keys/authorized_keys"))
            .is_err()
    );
}

#[test]
fn prune_removes_only_sessions_not_updated_for_long() {
    let (_dir, store) = store();
    store
        .create(&meta("ancient", "2020-01-01T00:00:00.000Z"))
        .unwrap();
    store.create(&meta("fresh", &now())).unwrap();
    let removed = store.prune(Duration::from_secs(86_400)).unwrap();
    assert_eq!(removed, ["ancient"]);
    let left: Vec<String> = store.list().unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(left, ["fresh"]);
    store.remove("fresh").unwrap();
    assert!(store.list().unwrap().is_empty());
}
