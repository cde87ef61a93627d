//! Where a session's audit log ended when its run ended, recorded in the
//! session's metadata so that `kaizen audit verify` tells a log whose last
//! entries were removed.

use kaizen_session_store::{LogEnd, SessionStore};
use std::path::{Path, PathBuf};

/// The audit logs' directory under `home` (the built-in `audit` plugin's
/// data directory).
pub fn dir_in(home: &Path) -> PathBuf {
    home.join("data").join("audit")
}

/// Records, in session `id`'s metadata, where its audit log ends now: a
/// later `kaizen audit verify` tells a log whose last entries were
/// removed. A failure is for the user to hear (the run is done), and
/// comes back as what to tell them.
pub fn anchor(store: &SessionStore, home: &Path, id: &str) -> Option<String> {
    let log = dir_in(home).join(format!("{id}.jsonl"));
    let last = std::fs::read_to_string(&log)
        .ok()
        .and_then(|text| kaizen_audit_log::last_entry(&text))?;
    let end = LogEnd {
        entries: last.seq,
        hash: last.hash,
    };
    let recorded = store.update_meta(id, |meta| meta.audit_end = Some(end));
    recorded
        .err()
        .map(|err| format!("the audit log's end could not be recorded: {err}"))
}
