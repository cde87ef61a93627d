//! Checkpoints: round trips, damage recovered from, retention, removal
//! after a step.

use super::each_with_session;
use serde_json::{Value, json};

#[test]
fn checkpoints_round_trip_raw_and_compressed() {
    each_with_session("s", |fx| {
        let store = &fx.store;
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
        let listed = store.list_checkpoints("s").unwrap();
        assert_eq!(listed[1].bytes, big_size);
        assert_eq!(listed[1].path, loaded.path);
    });
}

#[test]
fn a_truncated_or_bit_flipped_checkpoint_is_passed_over_with_a_warning() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        for step in [4, 8, 12] {
            store
                .write_checkpoint("s", step, &json!({ "step": step }))
                .unwrap();
        }
        // The newest is cut short, the middle one has a flipped bit.
        let newest = fx.checkpoint_seq("s", 2);
        let bytes = fx.storage.read_checkpoint("s", newest).unwrap();
        fx.storage
            .write_checkpoint("s", newest, &bytes[..bytes.len() - 3])
            .unwrap();
        let middle = fx.checkpoint_seq("s", 1);
        let mut bytes = fx.storage.read_checkpoint("s", middle).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x10;
        fx.storage.write_checkpoint("s", middle, &bytes).unwrap();

        let recovery = store.load_latest::<Value>("s").unwrap();
        let loaded = recovery.loaded.unwrap();
        assert_eq!(loaded.step, 4);
        assert_eq!(recovery.warnings.len(), 2, "{:?}", recovery.warnings);
        assert!(recovery.warnings[0].contains("truncated"));
        assert!(recovery.warnings[1].contains("checksum mismatch"));
        assert!(recovery.warnings[0].contains("using the checkpoint at step 4 instead"));

        // With every checkpoint damaged, nothing loads and the warning says
        // the log alone is left.
        let oldest = fx.checkpoint_seq("s", 0);
        fx.storage.write_checkpoint("s", oldest, b"KZ").unwrap();
        let recovery = store.load_latest::<Value>("s").unwrap();
        assert!(recovery.loaded.is_none());
        assert!(recovery.warnings[2].contains("event log alone"));
    });
}

#[test]
fn retention_keeps_the_last_k() {
    each_with_session("s", |fx| {
        let store = fx.store.clone().with_checkpoints(3, 1 << 20);
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
        assert_eq!(fx.storage.checkpoints("s").unwrap(), [5, 6, 7]);
    });
}

#[test]
fn checkpoints_after_a_step_and_unreadable_ones_are_removed() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        for step in [2, 4, 6] {
            store.write_checkpoint("s", step, &json!(step)).unwrap();
        }
        fx.storage.write_checkpoint("s", 9, b"not one").unwrap();
        store.remove_checkpoints_after("s", 4).unwrap();
        let steps: Vec<Option<u64>> = store
            .list_checkpoints("s")
            .unwrap()
            .iter()
            .map(|c| c.step)
            .collect();
        assert_eq!(steps, [Some(2), Some(4)]);
        // Numbering goes on after the newest left.
        store.write_checkpoint("s", 5, &json!(5)).unwrap();
        assert_eq!(fx.storage.checkpoints("s").unwrap(), [1, 2, 3]);
    });
}
