//! Sessions' metadata: create, update, list, resolve, remove, prune.

use super::{each, each_with_session, meta};
use crate::{StoreError, now};
use std::time::Duration;

#[test]
fn metadata_is_created_updated_listed_and_resolved() {
    each(|fx| {
        let store = &fx.store;
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
        assert!(store.exists("old").unwrap());
        assert!(!store.exists("nope").unwrap());
        assert!(!store.exists("../old").unwrap());
    });
}

#[test]
fn hostile_ids_are_refused() {
    each(|fx| {
        let store = &fx.store;
        for id in ["", "..", "../x", "a/b", ".hidden", "a\\b", "a b"] {
            assert!(
                matches!(store.create(&meta(id, "t")), Err(StoreError::InvalidId(_))),
                "{id:?}"
            );
            assert!(store.meta(id).is_err(), "{id:?}");
        }
        assert!(store.remove("..").is_err());
        assert!(store.list().unwrap().is_empty());
    });
}

#[test]
fn prune_removes_only_sessions_not_updated_for_long() {
    each(|fx| {
        let store = &fx.store;
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
        assert!(matches!(
            store.meta("fresh"),
            Err(StoreError::NotFound { .. })
        ));
    });
}

/// A session has a directory (and hooks a transcript file) only where the
/// storage keeps one.
#[test]
fn a_directory_is_given_only_by_a_storage_on_this_machine() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        if fx.is_files() {
            let dir = store.dir("s").unwrap();
            assert_eq!(dir, store.root().join("s"));
            assert!(dir.join("meta.json").is_file());
            assert_eq!(
                store.transcript_path("s").unwrap(),
                dir.join("events.jsonl")
            );
        } else {
            assert!(matches!(store.dir("s"), Err(StoreError::NotLocal { .. })));
            assert!(store.transcript_path("s").is_err());
        }
        assert!(matches!(
            store.dir("nope"),
            Err(StoreError::NotFound { .. })
        ));
    });
}
