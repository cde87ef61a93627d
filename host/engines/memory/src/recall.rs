//! What a session starts with: the entries most relevant to its task
//! (BM25 over their text), then the most recently used, the user's and
//! the project's, within a budget, as a section of the system prompt.

use crate::store::{Entry, MemoryError, MemoryStore, Scope, now};

/// Entries looked at, at most.
const CANDIDATES: usize = 40;

/// What was recalled for a session.
#[derive(Debug, Default)]
pub struct Recalled {
    /// The entries, most relevant first.
    pub entries: Vec<Entry>,
}

impl Recalled {
    /// The system prompt's section, or `None` when nothing was recalled.
    pub fn prompt(&self) -> Option<String> {
        if self.entries.is_empty() {
            return None;
        }
        let mut text = String::from(
            "<memory>\nWhat earlier sessions learned (Kaizen's memory; the Memory tool saves, searches and forgets entries):\n",
        );
        for entry in &self.entries {
            text.push_str(&format!("- {}\n", entry_line(entry)));
        }
        text.push_str("</memory>");
        Some(text)
    }
}

/// One entry as sessions are shown it: `[you preference, #3] text`.
pub fn entry_line(entry: &Entry) -> String {
    let whose = match entry.scope {
        Scope::User => "you",
        Scope::Project(_) => "this project",
    };
    format!(
        "[{} {}, #{}] {}",
        whose,
        entry.kind.name(),
        entry.id,
        entry.text
    )
}

/// The entries to start a session in `project` on `task` with, within
/// `budget` bytes of text; they are marked used.
pub fn recall(
    store: &MemoryStore,
    task: &str,
    project: &str,
    budget: usize,
) -> Result<Recalled, MemoryError> {
    let mut chosen: Vec<Entry> = Vec::new();
    let mut spent = 0;
    let found = store.search(task, Some(project), CANDIDATES)?;
    let recent = store.recent(Some(project), CANDIDATES)?;
    for entry in found.into_iter().chain(recent) {
        if chosen.iter().any(|kept| kept.id == entry.id) {
            continue;
        }
        let cost = entry.text.len() + 32;
        if spent + cost > budget {
            continue;
        }
        spent += cost;
        chosen.push(entry);
    }
    let ids: Vec<i64> = chosen.iter().map(|entry| entry.id).collect();
    store.touch(&ids, now())?;
    Ok(Recalled { entries: chosen })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Kind;

    #[test]
    fn relevant_first_then_recent_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::open(&dir.path().join("m.sqlite")).unwrap();
        let here = Scope::Project("/p".into());
        store
            .save(
                &here,
                Kind::Fact,
                "Deploys go through the staging branch",
                None,
            )
            .unwrap();
        store
            .save(&Scope::User, Kind::Preference, "Use British spelling", None)
            .unwrap();
        store
            .save(
                &Scope::Project("/q".into()),
                Kind::Fact,
                "Deploys are manual",
                None,
            )
            .unwrap();
        let recalled = recall(&store, "Deploy the fix", "/p", 10_000).unwrap();
        let texts: Vec<&str> = recalled.entries.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Deploys go through the staging branch",
                "Use British spelling"
            ]
        );
        let prompt = recalled.prompt().unwrap();
        assert!(
            prompt.contains("[this project fact, #1] Deploys go through"),
            "{prompt}"
        );
        assert!(
            prompt.contains("[you preference, #2] Use British spelling"),
            "{prompt}"
        );
        let small = recall(&store, "Deploy the fix", "/p", 80).unwrap();
        assert_eq!(small.entries.len(), 1);
        assert!(
            recall(&store, "x", "/nowhere-new", 0)
                .unwrap()
                .prompt()
                .is_none()
        );
    }
}
