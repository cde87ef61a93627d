//! Kaizen's tamper-evident audit log: one JSON object per line, each
//! carrying the hash of the line before it, so that changing, removing or
//! reordering any line breaks the chain from there on.
//!
//! The built-in `audit` hook plugin writes it (this crate builds for
//! wasm32-wasip2); `kaizen audit verify` checks it. Hashes are BLAKE3 over
//! a canonical form of the entry (object keys sorted), independent of how
//! a JSON library orders keys.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `prev` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// 1 for the first entry, then one more each line.
    pub seq: u64,
    /// When it was written, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The session the event belongs to.
    pub session_id: String,
    /// The hook event (`PreToolUse`, ...).
    pub event: String,
    /// What happened: the event's payload, long texts shortened.
    pub record: Value,
    /// The previous entry's hash ([`GENESIS`] for the first).
    pub prev: String,
    /// This entry's hash.
    pub hash: String,
}

impl Entry {
    /// The entry following `prev` (or the first, for `None`), hashed.
    pub fn next(
        prev: Option<&Entry>,
        time_ms: u64,
        session_id: &str,
        event: &str,
        record: Value,
    ) -> Entry {
        let mut entry = Entry {
            seq: prev.map_or(1, |p| p.seq + 1),
            time_ms,
            session_id: session_id.to_string(),
            event: event.to_string(),
            record,
            prev: prev.map_or_else(|| GENESIS.to_string(), |p| p.hash.clone()),
            hash: String::new(),
        };
        entry.hash = entry.digest();
        entry
    }

    /// The hash of everything but `hash`.
    pub fn digest(&self) -> String {
        let mut hasher = blake3::Hasher::new();
        for part in [
            self.seq.to_string(),
            self.time_ms.to_string(),
            self.session_id.clone(),
            self.event.clone(),
            canonical(&self.record),
            self.prev.clone(),
        ] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.finalize().to_hex().to_string()
    }

    /// The entry as one line of JSON (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("an entry always serializes")
    }
}

/// `value` as JSON with every object's keys sorted.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&map[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // Serialized by hand in key order: a `Map` may keep insertion order
    // (serde_json's preserve_order), which `sorted` fixes, but only if the
    // map then writes in that order, which both kinds of `Map` do.
    serde_json::to_string(&sorted(value)).expect("a value always serializes")
}

/// Where a log stops being trustworthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong there.
    pub reason: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Checks a whole log: every line parses, numbers follow each other, each
/// links to the one before, and each hash is right. The number of entries,
/// or where the chain breaks first.
pub fn verify(text: &str) -> Result<usize, Broken> {
    let mut prev: Option<Entry> = None;
    let mut count = 0;
    for (index, line) in text.lines().enumerate() {
        let broken = |reason: String| Broken {
            line: index + 1,
            reason,
        };
        if line.trim().is_empty() {
            return Err(broken("an empty line".into()));
        }
        let entry: Entry = serde_json::from_str(line)
            .map_err(|err| broken(format!("not an audit entry ({err})")))?;
        let want_seq = prev.as_ref().map_or(1, |p| p.seq + 1);
        if entry.seq != want_seq {
            return Err(broken(format!(
                "entry number {} where {want_seq} should be (a line was removed, added or moved)",
                entry.seq
            )));
        }
        let want_prev = prev.as_ref().map_or(GENESIS, |p| p.hash.as_str());
        if entry.prev != want_prev {
            return Err(broken(
                "it does not link to the line before (a line was changed, removed or moved)".into(),
            ));
        }
        if entry.digest() != entry.hash {
            return Err(broken(
                "its content does not match its hash (it was changed)".into(),
            ));
        }
        count += 1;
        prev = Some(entry);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(Broken {
            line: count.max(1),
            reason: "the last line is cut short".into(),
        });
    }
    Ok(count)
}

/// The BLAKE3 hash of `text`, in hex: what an entry keeps of a text too
/// long to keep whole.
pub fn hash_text(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// The last entry of a log's text, if it parses.
pub fn last_entry(text: &str) -> Option<Entry> {
    let line = text.lines().rev().find(|line| !line.trim().is_empty())?;
    serde_json::from_str(line).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(n: u64) -> String {
        let mut prev = None;
        let mut text = String::new();
        for i in 0..n {
            let entry = Entry::next(
                prev.as_ref(),
                1_700_000_000_000 + i,
                "s1",
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": format!("echo {i}"), "b": 1, "a": 2}}),
            );
            text.push_str(&entry.to_line());
            text.push('\n');
            prev = Some(entry);
        }
        text
    }

    #[test]
    fn an_intact_chain_verifies() {
        assert_eq!(verify(&log(5)), Ok(5));
        assert_eq!(verify(""), Ok(0));
        assert_eq!(last_entry(&log(3)).unwrap().seq, 3);
    }

    #[test]
    fn every_kind_of_tampering_is_found_at_its_line() {
        let text = log(5);
        let lines: Vec<&str> = text.lines().collect();
        let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();

        let changed = text.replace("echo 2", "rm -rf");
        assert_eq!(verify(&changed).unwrap_err().line, 3);

        let mut removed = lines.clone();
        removed.remove(1);
        assert_eq!(verify(&join(&removed)).unwrap_err().line, 2);

        let mut swapped = lines.clone();
        swapped.swap(2, 3);
        assert_eq!(verify(&join(&swapped)).unwrap_err().line, 3);

        let truncated = &text[..text.len() - 1];
        assert!(verify(truncated).unwrap_err().reason.contains("cut short"));

        // Re-hashing a changed line is not enough: the next line's link breaks.
        let mut forged: Entry = serde_json::from_str(lines[1]).unwrap();
        forged.record = json!({"tool_name": "Bash", "tool_input": {"command": "innocent"}});
        forged.hash = forged.digest();
        let line = forged.to_line();
        let mut relinked = lines.clone();
        relinked[1] = &line;
        let err = verify(&join(&relinked)).unwrap_err();
        assert_eq!(err.line, 3, "{err}");
    }

    #[test]
    fn key_order_does_not_matter() {
        let a = Entry::next(None, 1, "s", "E", json!({"x": 1, "y": {"b": 2, "a": 1}}));
        let reordered: Value = serde_json::from_str(r#"{"y": {"a": 1, "b": 2}, "x": 1}"#).unwrap();
        let b = Entry::next(None, 1, "s", "E", reordered);
        assert_eq!(a.hash, b.hash);
    }
}
