//! The event log: appending, reading back, torn and damaged lines,
//! truncation.

use super::each_with_session;
use serde_json::{Value, json};

#[test]
fn events_round_trip_and_a_torn_last_line_is_left_out_then_cut() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        let mut log = store.log_writer("s").unwrap();
        log.append(&json!({"n": 1})).unwrap();
        log.append(&json!({"n": 2})).unwrap();
        log.sync().unwrap();
        drop(log);
        fx.storage
            .open_log("s")
            .unwrap()
            .append(br#"{"n": 3, "cut"#)
            .unwrap();

        let read = store.read_events::<Value>("s").unwrap();
        assert_eq!(read.events, [json!({"n": 1}), json!({"n": 2})]);
        assert!(read.torn_tail.unwrap().contains("cut short"));

        // Appending again first cuts the torn line off.
        let mut log = store.log_writer("s").unwrap();
        log.append(&json!({"n": 3})).unwrap();
        let read = store.read_events::<Value>("s").unwrap();
        assert_eq!(read.events.len(), 3);
        assert_eq!(read.torn_tail, None);
        assert_eq!(
            fx.storage.read_log("s").unwrap(),
            b"{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
        );
    });
}

#[test]
fn a_damaged_line_before_the_last_is_an_error_naming_it() {
    each_with_session("s", |fx| {
        fx.set_log("s", b"{\"n\":1}\n{garbage\n{\"n\":3}\n");
        let err = fx.store.read_events::<Value>("s").unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    });
}

#[test]
fn a_log_is_truncated_to_its_first_lines() {
    each_with_session("s", |fx| {
        let store = &fx.store;
        assert!(store.read_events::<Value>("s").unwrap().events.is_empty());
        store.truncate_log("s", 1).unwrap();
        let mut log = store.log_writer("s").unwrap();
        for n in 1..=4 {
            log.append(&json!({ "n": n })).unwrap();
        }
        store.truncate_log("s", 9).unwrap();
        assert_eq!(store.read_events::<Value>("s").unwrap().events.len(), 4);
        store.truncate_log("s", 2).unwrap();
        let read = store.read_events::<Value>("s").unwrap();
        assert_eq!(read.events, [json!({"n": 1}), json!({"n": 2})]);
        store.truncate_log("s", 0).unwrap();
        assert!(store.read_events::<Value>("s").unwrap().events.is_empty());
    });
}
