//! Redaction happens before the storage sees a byte.

use super::{each, meta};
use crate::{REDACTED, now};
use serde_json::{Value, json};

/// Whether `bytes` (a checkpoint's payload decompressed) hold `secret`.
fn holds(bytes: &[u8], secret: &str) -> bool {
    let plain = if bytes.starts_with(b"KZCKPT\0") && bytes.get(8) == Some(&1) {
        zstd::stream::decode_all(&bytes[57..]).unwrap()
    } else {
        bytes.to_vec()
    };
    memchr::memmem::find(&plain, secret.as_bytes()).is_some()
}

#[test]
fn secrets_never_reach_the_storage() {
    each(|fx| {
        let secret = "sk-live-0123456789abcdef";
        let store = fx
            .store
            .clone()
            .with_secrets([secret.to_string(), "short".into()]);
        let mut m = meta("s", &now());
        m.task = format!("use {secret}");
        store.create(&m).unwrap();
        store
            .update_meta("s", |m| m.status = format!("failed: {secret}"))
            .unwrap();
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

        let held = fx.held();
        assert!(held.len() >= 4, "{held:?}");
        for (name, bytes) in held {
            assert!(!holds(&bytes, secret), "{name}");
        }
        let loaded = store.load_at::<Value>("s", 1).unwrap().loaded.unwrap();
        assert_eq!(loaded.value, json!({"key": REDACTED, "short": "short"}));
        let meta = store.meta("s").unwrap();
        assert!(meta.task.contains(REDACTED));
        assert!(meta.status.contains(REDACTED));
        let debug = format!("{store:?}");
        assert!(!debug.contains(secret), "{debug}");
    });
}
