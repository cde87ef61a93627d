//! Appending one event to a session's chain.

use kaizen_audit_log::{Entry, last_entry};
use kaizen_sdk::serde_json::{Map, Value};
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest text kept whole in an entry; longer ones keep their start and
/// their length and hash, so the entry stays small and still pins them.
const KEPT_CHARS: usize = 4096;

/// Bytes read from the end of a log to find its last entry (entries are
/// bounded by [`KEPT_CHARS`] per text).
const TAIL_BYTES: u64 = 1 << 20;

/// The log of the session `payload` belongs to (a sub-agent's events go
/// to its session's log).
fn log_path(dir: &Path, payload: &Value) -> PathBuf {
    let session = payload["session_id"].as_str().unwrap_or("unknown");
    let root = session.split('/').next().unwrap_or(session);
    let safe: String = root
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}.jsonl"))
}

/// Appends the event in `payload` to its session's log.
pub fn append(dir: &Path, payload: &Value) -> std::io::Result<()> {
    let path = log_path(dir, payload);
    let prev = last_in(&path)?;
    let event = payload["hook_event_name"].as_str().unwrap_or("unknown");
    let session = payload["session_id"].as_str().unwrap_or("unknown");
    let entry = Entry::next(prev.as_ref(), now_ms(), session, event, record(payload));
    let mut line = entry.to_line();
    line.push('\n');
    // One write of the whole line, at the end whatever others wrote.
    let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
    file.write_all(line.as_bytes())?;
    file.flush()
}

/// The last entry of the log at `path`, read from its end; `None` for a
/// log not written yet.
fn last_in(path: &Path) -> std::io::Result<Option<kaizen_audit_log::Entry>> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    Ok(last_entry(&String::from_utf8_lossy(&tail)))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What of the payload is kept: everything but the fields every entry has
/// anyway, long texts shortened.
pub fn record(payload: &Value) -> Value {
    let mut out = Map::new();
    if let Value::Object(map) = payload {
        for (key, value) in map {
            if matches!(
                key.as_str(),
                "session_id" | "hook_event_name" | "transcript_path"
            ) {
                continue;
            }
            out.insert(key.clone(), shorten(value));
        }
    }
    Value::Object(out)
}

fn shorten(value: &Value) -> Value {
    match value {
        Value::String(text) if text.chars().count() > KEPT_CHARS => {
            let kept: String = text.chars().take(KEPT_CHARS).collect();
            let hash = kaizen_audit_log::hash_text(text);
            Value::String(format!(
                "{kept}… [{} characters in all; blake3 {hash}]",
                text.chars().count()
            ))
        }
        Value::Array(items) => Value::Array(items.iter().map(shorten).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), shorten(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_sdk::serde_json::json;

    #[test]
    fn events_chain_per_session_and_sub_agents_join_their_parent() {
        let dir = tempfile::tempdir().unwrap();
        let event = |session: &str, name: &str| json!({"session_id": session, "hook_event_name": name, "cwd": "/w", "tool_name": "Bash"});
        append(dir.path(), &event("s1", "SessionStart")).unwrap();
        append(dir.path(), &event("s1/call_1", "PreToolUse")).unwrap();
        append(dir.path(), &event("s2", "SessionStart")).unwrap();
        append(dir.path(), &event("s1", "SessionEnd")).unwrap();
        let s1 = std::fs::read_to_string(dir.path().join("s1.jsonl")).unwrap();
        assert_eq!(kaizen_audit_log::verify(&s1), Ok(3));
        assert!(s1.contains("\"session_id\":\"s1/call_1\""));
        let s2 = std::fs::read_to_string(dir.path().join("s2.jsonl")).unwrap();
        assert_eq!(kaizen_audit_log::verify(&s2), Ok(1));
    }

    #[test]
    fn long_texts_keep_their_start_length_and_hash() {
        let long = "x".repeat(10_000);
        let kept = record(&json!({"session_id": "s", "tool_response": {"content": long}}));
        let text = kept["tool_response"]["content"].as_str().unwrap();
        assert!(text.starts_with(&"x".repeat(KEPT_CHARS)));
        assert!(
            text.contains("10000 characters in all; blake3 "),
            "{}",
            &text[KEPT_CHARS..]
        );
        assert!(kept.get("session_id").is_none());
    }
}
