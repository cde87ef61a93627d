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
/// removed. A failure is a warning: the run is done.
pub fn anchor(store: &SessionStore, home: &Path, id: &str) {
    let log = dir_in(home).join(format!("{id}.jsonl"));
    let Some(last) = std::fs::read_to_string(&log)
        .ok()
        .and_then(|text| kaizen_audit_log::last_entry(&text))
    else {
        return;
    };
    let end = LogEnd {
        entries: last.seq,
        hash: last.hash,
    };
    if let Err(err) = store.update_meta(id, |meta| meta.audit_end = Some(end)) {
        eprintln!("kaizen: warning: the audit log's end could not be recorded: {err}");
    }
}
