//! The kept sessions, for front ends: what `kaizen sessions` and `kaizen
//! rewind` do. Each operation names a session as a person does (its id,
//! or `last`) and returns what it found or did; [`crate::transcript`]
//! turns what [`show`] finds into text for people.

use crate::session::{fork, open_store};
use kaizen_loop::LogRecord;
use kaizen_session_store::{EventsRead, Restore, SessionMeta, SessionStore};
use std::path::PathBuf;
use std::time::Duration;

/// Every kept session.
pub fn list() -> anyhow::Result<Vec<SessionMeta>> {
    Ok(open_store()?.list()?)
}

/// A session read back.
pub struct Shown {
    /// Its id.
    pub id: String,
    /// Its metadata.
    pub meta: SessionMeta,
    /// Its log; `None` when it ran on another runtime, which keeps the
    /// conversation.
    pub log: Option<EventsRead<LogRecord>>,
}

/// The session `name` names, with its log.
pub fn show(name: &str) -> anyhow::Result<Shown> {
    let store = open_store()?;
    let id = store.resolve(name)?;
    let meta = store.meta(&id)?;
    let log = match meta.runtime {
        Some(_) => None,
        None => Some(store.read_events::<LogRecord>(&id)?),
    };
    Ok(Shown { id, meta, log })
}

/// Removes the session `name` names; its id.
pub fn remove(name: &str) -> anyhow::Result<String> {
    let store = open_store()?;
    let id = store.resolve(name)?;
    store.remove(&id)?;
    Ok(id)
}

/// Removes the sessions older than `age`; their ids.
pub fn prune(age: Duration) -> anyhow::Result<Vec<String>> {
    Ok(open_store()?.prune(age)?)
}

/// `30d`, `12h`, `90m`, `45s` (or plain seconds) as a duration.
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let not_an_age = || format!("`{text}` is not an age: use e.g. 30d, 12h, 90m or 45s");
    let seconds_per = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => return Err(not_an_age()),
    };
    let number: u64 = number.parse().map_err(|_| not_an_age())?;
    Ok(Duration::from_secs(number.saturating_mul(seconds_per)))
}

/// Putting a session's files back as they were before a cycle: planned
/// first, so that a front end can show the plan before (or instead of)
/// carrying it out.
pub struct Rewind {
    store: SessionStore,
    /// The session's id.
    pub id: String,
    /// The cycle whose edits, and every later one's, are undone.
    pub to: u32,
    /// The files that go back, each as it was before it was first changed
    /// from that cycle on (Write, Edit, MultiEdit and NotebookEdit's;
    /// Bash's and other programs' changes are not tracked).
    pub files: Vec<Restore>,
}

/// The rewind of the session `name` names to before cycle `to`.
pub fn plan_rewind(name: &str, to: u32) -> anyhow::Result<Rewind> {
    let store = open_store()?;
    let id = store.resolve(name)?;
    let files = store.rewind_plan(&id, u64::from(to))?;
    Ok(Rewind {
        store,
        id,
        to,
        files,
    })
}

impl Rewind {
    /// Puts the planned files back.
    pub fn restore(&self) -> anyhow::Result<()> {
        // Sessions from before files were kept with their directory are
        // put back beneath their workspace.
        let workspace = PathBuf::from(self.store.meta(&self.id)?.cwd);
        self.store.restore(&self.id, &self.files, &workspace)?;
        Ok(())
    }

    /// A new session that goes on from before cycle `to`; its id.
    pub fn fork(&self) -> anyhow::Result<String> {
        Ok(fork(&self.store, &self.id, Some(self.to.saturating_sub(1)))?.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_take_a_unit() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_age("45"), Ok(Duration::from_secs(45)));
        assert!(parse_age("3w").unwrap_err().contains("30d"));
        assert!(parse_age("d").is_err());
    }
}
