//! The memory store: entries in SQLite, their text indexed with FTS5
//! (words stemmed, so `deploys` finds `deploy`) and ranked by BM25, each with a scope (the user's, or one project's), a
//! kind, the session that saved it, and when it was saved and last used.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What went wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// SQLite failed.
    #[error("the memory store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A value the store cannot take.
    #[error("{0}")]
    Invalid(String),
}

/// Whose an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "project")]
pub enum Scope {
    /// The user's, recalled in every project.
    User,
    /// One project's, by its identity (see [`project_identity`]).
    Project(String),
}

/// What kind of thing an entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// How the user likes things done.
    Preference,
    /// Something true of the project or the world.
    Fact,
    /// A mistake not to make again.
    Correction,
    /// How to do something here.
    Procedure,
}

impl Kind {
    /// Every kind, as the tool and the CLI spell them.
    pub const ALL: [&'static str; 4] = ["preference", "fact", "correction", "procedure"];

    /// The kind named `name`.
    pub fn parse(name: &str) -> Result<Self, MemoryError> {
        match name {
            "preference" => Ok(Self::Preference),
            "fact" => Ok(Self::Fact),
            "correction" => Ok(Self::Correction),
            "procedure" => Ok(Self::Procedure),
            other => Err(MemoryError::Invalid(format!(
                "`{other}` is not a kind of memory; use one of: {}",
                Self::ALL.join(", ")
            ))),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL[self as usize]
    }
}

/// One remembered thing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its id, for `forget`.
    pub id: i64,
    /// Whose it is.
    #[serde(flatten)]
    pub scope: Scope,
    /// What kind of thing it says.
    pub kind: Kind,
    /// What it says.
    pub text: String,
    /// The session that saved it, if one did.
    pub session: Option<String>,
    /// When it was saved, in seconds since the Unix epoch.
    pub created: i64,
    /// When it was last saved, recalled or found.
    pub used: i64,
}

/// The longest entry, in bytes.
pub const MAX_TEXT: usize = 2_000;

/// The memory store in one SQLite file.
pub struct MemoryStore {
    db: Connection,
}

impl MemoryStore {
    /// Opens (creating) the store at `path`.
    pub fn open(path: &Path) -> Result<Self, MemoryError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| {
                MemoryError::Invalid(format!("creating {}: {err}", parent.display()))
            })?;
        }
        let db = Connection::open(path)?;
        db.busy_timeout(Duration::from_secs(5))?;
        db.pragma_update(None, "journal_mode", "WAL")?;
        // With WAL, NORMAL cannot corrupt the store; a crash may lose the
        // last saves, not what was there.
        db.pragma_update(None, "synchronous", "NORMAL")?;
        db.execute_batch(
            "CREATE TABLE IF NOT EXISTS entries (
                id INTEGER PRIMARY KEY,
                project TEXT,
                kind TEXT NOT NULL,
                text TEXT NOT NULL,
                session TEXT,
                created INTEGER NOT NULL,
                used INTEGER NOT NULL
            );
            CREATE INDEX IF NOT EXISTS entries_project ON entries(project, used);
            CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts
                USING fts5(text, content='entries', content_rowid='id', tokenize='porter unicode61');
            CREATE TRIGGER IF NOT EXISTS entries_added AFTER INSERT ON entries BEGIN
                INSERT INTO entries_fts(rowid, text) VALUES (new.id, new.text);
            END;
            CREATE TRIGGER IF NOT EXISTS entries_removed AFTER DELETE ON entries BEGIN
                INSERT INTO entries_fts(entries_fts, rowid, text) VALUES ('delete', old.id, old.text);
            END;",
        )?;
        Ok(Self { db })
    }

    /// Saves `text`; an entry with the same scope and text is only marked
    /// used again. Its id.
    pub fn save(
        &self,
        scope: &Scope,
        kind: Kind,
        text: &str,
        session: Option<&str>,
    ) -> Result<i64, MemoryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(MemoryError::Invalid("a memory needs some text".into()));
        }
        if text.len() > MAX_TEXT {
            return Err(MemoryError::Invalid(format!(
                "a memory is at most {MAX_TEXT} bytes (this is {}); keep the one thing worth remembering",
                text.len()
            )));
        }
        let project = project_of(scope);
        let now = now();
        let existing: Option<i64> = self
            .db
            .query_row(
                "SELECT id FROM entries WHERE project IS ?1 AND text = ?2",
                params![project, text],
                |row| row.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            self.touch(&[id], now)?;
            return Ok(id);
        }
        self.db.execute(
            "INSERT INTO entries (project, kind, text, session, created, used) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            params![project, kind.name(), text, session, now],
        )?;
        Ok(self.db.last_insert_rowid())
    }

    /// The entries whose text matches `query`'s words (any of them), best
    /// first by BM25, then the most recently used; the user's and
    /// `project`'s only (`None`: the user's only). At most `limit`.
    pub fn search(
        &self,
        query: &str,
        project: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Entry>, MemoryError> {
        let Some(expression) = match_expression(query) else {
            return Ok(Vec::new());
        };
        let mut statement = self.db.prepare_cached(
            "SELECT e.id, e.project, e.kind, e.text, e.session, e.created, e.used
             FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
             WHERE entries_fts MATCH ?1 AND (e.project IS NULL OR e.project = ?2)
             ORDER BY entries_fts.rank, e.used DESC LIMIT ?3",
        )?;
        let rows = statement.query_map(params![expression, project, limit as i64], entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The most recently used entries of the user's and `project`'s.
    pub fn recent(&self, project: Option<&str>, limit: usize) -> Result<Vec<Entry>, MemoryError> {
        let mut statement = self.db.prepare_cached(
            "SELECT id, project, kind, text, session, created, used FROM entries
             WHERE project IS NULL OR project = ?1 ORDER BY used DESC, id DESC LIMIT ?2",
        )?;
        let rows = statement.query_map(params![project, limit as i64], entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every entry, every project's and the user's, oldest first.
    pub fn list(&self) -> Result<Vec<Entry>, MemoryError> {
        let mut statement = self.db.prepare(
            "SELECT id, project, kind, text, session, created, used FROM entries ORDER BY id",
        )?;
        let rows = statement.query_map([], entry)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Removes entry `id` when it is `project`'s, or the user's when
    /// `users` (`None`: whoever's it is); whether there was one.
    pub fn forget(&self, id: i64, project: Option<&str>, users: bool) -> Result<bool, MemoryError> {
        let removed = match (project, users) {
            (None, _) => self
                .db
                .execute("DELETE FROM entries WHERE id = ?1", params![id])?,
            (Some(project), true) => self.db.execute(
                "DELETE FROM entries WHERE id = ?1 AND (project IS NULL OR project = ?2)",
                params![id, project],
            )?,
            (Some(project), false) => self.db.execute(
                "DELETE FROM entries WHERE id = ?1 AND project = ?2",
                params![id, project],
            )?,
        };
        Ok(removed > 0)
    }

    /// Gives the entries kept under `legacy` (a project's identity as an
    /// older Kaizen wrote it: its path alone) to `project`; how many.
    pub fn adopt(&self, legacy: &str, project: &str) -> Result<usize, MemoryError> {
        Ok(self.db.execute(
            "UPDATE entries SET project = ?2 WHERE project = ?1",
            params![legacy, project],
        )?)
    }

    /// Marks `ids` used at `at`, in one transaction.
    pub fn touch(&self, ids: &[i64], at: i64) -> Result<(), MemoryError> {
        if ids.is_empty() {
            return Ok(());
        }
        let transaction = self.db.unchecked_transaction()?;
        {
            let mut statement =
                transaction.prepare_cached("UPDATE entries SET used = ?1 WHERE id = ?2")?;
            for id in ids {
                statement.execute(params![at, id])?;
            }
        }
        transaction.commit()?;
        Ok(())
    }
}

fn project_of(scope: &Scope) -> Option<&str> {
    match scope {
        Scope::User => None,
        Scope::Project(project) => Some(project),
    }
}

fn entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let project: Option<String> = row.get(1)?;
    let kind: String = row.get(2)?;
    Ok(Entry {
        id: row.get(0)?,
        scope: project.map_or(Scope::User, Scope::Project),
        kind: Kind::parse(&kind).unwrap_or(Kind::Fact),
        text: row.get(3)?,
        session: row.get(4)?,
        created: row.get(5)?,
        used: row.get(6)?,
    })
}

/// Words of a query that count, at most: the longest, which say the most
/// (a task may be a pasted log).
const QUERY_WORDS: usize = 12;

/// English words too common to say what an entry is about.
const STOPWORDS: &[&str] = &[
    "about", "after", "all", "also", "and", "any", "are", "but", "can", "did", "does", "for",
    "from", "had", "has", "have", "how", "into", "its", "not", "now", "off", "one", "our", "out",
    "please", "should", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "was", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with",
    "would", "you", "your",
];

/// An FTS5 expression matching any of `query`'s distinct words of three
/// letters or more but the commonest (its longest [`QUERY_WORDS`]), each
/// quoted so that no character of the query is FTS5 syntax; `None`
/// without words.
fn match_expression(query: &str) -> Option<String> {
    let mut words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|word| !STOPWORDS.contains(&word.as_str()))
        .collect();
    words.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    words.dedup();
    words.truncate(QUERY_WORDS);
    let quoted: Vec<String> = words.iter().map(|word| format!("\"{word}\"")).collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

/// Now, in seconds since the Unix epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64)
}

/// A project's identity: its workspace's canonical path.
pub fn project_identity(workspace: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let path = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    // The directory itself, and its repository's `.git`, as the kernel
    // knows them: a repository cloned anew to a reused path is another
    // directory, and does not recall what was saved in the old one.
    let id = |dir: &Path| {
        let meta = std::fs::metadata(dir).ok()?;
        // Its birth time too, where the file system keeps one: an inode
        // number freed by the old directory may be given to the new.
        let born = meta
            .created()
            .ok()
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_nanos());
        Some(format!("{}:{}:{born}", meta.dev(), meta.ino()))
    };
    let mut identity = path.display().to_string();
    if let Some(dir) = id(&path) {
        identity.push('@');
        identity.push_str(&dir);
        if let Some(git) = id(&path.join(".git")) {
            identity.push('+');
            identity.push_str(&git);
        }
    }
    identity
}

/// The path part of a project's identity (what listings show).
pub fn project_path(identity: &str) -> &str {
    identity.rsplit_once('@').map_or(identity, |(path, _)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, MemoryStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::open(&dir.path().join("memory.sqlite")).unwrap();
        (dir, store)
    }

    #[test]
    fn search_ranks_by_relevance_within_scope() {
        let (_dir, store) = store();
        let here = Scope::Project("/a".into());
        let there = Scope::Project("/b".into());
        store
            .save(&here, Kind::Fact, "The tests run with cargo nextest", None)
            .unwrap();
        store
            .save(
                &here,
                Kind::Procedure,
                "Release: tag, then cargo publish",
                None,
            )
            .unwrap();
        store
            .save(
                &Scope::User,
                Kind::Preference,
                "Answer briefly; cargo output is noise to me",
                None,
            )
            .unwrap();
        store
            .save(&there, Kind::Fact, "cargo nextest is broken here", None)
            .unwrap();
        let found = store
            .search("how do the tests run? nextest", Some("/a"), 10)
            .unwrap();
        let texts: Vec<&str> = found.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, ["The tests run with cargo nextest"]);
        let found = store.search("cargo", Some("/a"), 10).unwrap();
        assert_eq!(found.len(), 3, "the user's and /a's, not /b's");
        assert!(found.iter().all(|e| e.scope != there));
        assert!(
            store
                .search("cargo", None, 10)
                .unwrap()
                .iter()
                .all(|e| e.scope == Scope::User)
        );
    }

    #[test]
    fn query_text_is_never_fts_syntax() {
        let (_dir, store) = store();
        store
            .save(
                &Scope::User,
                Kind::Fact,
                "quotes \" and NEAR(a b) and col:umn",
                None,
            )
            .unwrap();
        for query in ["\"", "NEAR(", "col:umn", "a OR", "*", "-x", "🙂"] {
            store.search(query, None, 5).unwrap();
        }
        assert_eq!(store.search("umn", None, 5).unwrap().len(), 1);
    }

    #[test]
    fn a_project_is_its_directory_not_its_path_and_old_entries_can_be_adopted() {
        let parent = tempfile::tempdir().unwrap();
        let ws = parent.path().join("repo");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let first = project_identity(&ws);
        assert_eq!(project_identity(&ws), first, "stable while it stands");
        assert_eq!(
            project_path(&first),
            ws.canonicalize().unwrap().to_str().unwrap()
        );
        std::fs::remove_dir_all(&ws).unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        assert_ne!(
            project_identity(&ws),
            first,
            "a new clone is another project"
        );
        let (_dir, store) = store();
        let legacy = project_path(&first).to_string();
        store
            .save(
                &Scope::Project(legacy.clone()),
                Kind::Fact,
                "kept by an older kaizen",
                None,
            )
            .unwrap();
        assert_eq!(store.adopt(&legacy, &first).unwrap(), 1);
        let found = store.search("older", Some(&first), 5).unwrap();
        assert_eq!(found.len(), 1);
    }

    #[test]
    fn saving_again_touches_and_forget_respects_scope() {
        let (_dir, store) = store();
        let a = Scope::Project("/a".into());
        let id = store
            .save(&a, Kind::Fact, "x marks the spot", Some("s1"))
            .unwrap();
        assert_eq!(
            store
                .save(&a, Kind::Fact, " x marks the spot ", None)
                .unwrap(),
            id
        );
        assert_eq!(store.list().unwrap().len(), 1);
        assert!(
            !store.forget(id, Some("/b"), true).unwrap(),
            "not /b's to forget"
        );
        assert!(store.forget(id, Some("/a"), true).unwrap());
        assert!(store.list().unwrap().is_empty());
        assert!(
            store.search("spot", Some("/a"), 5).unwrap().is_empty(),
            "gone from the index"
        );
    }

    #[test]
    fn bad_entries_are_refused() {
        let (_dir, store) = store();
        assert!(store.save(&Scope::User, Kind::Fact, "  ", None).is_err());
        let long = "x".repeat(MAX_TEXT + 1);
        let err = store
            .save(&Scope::User, Kind::Fact, &long, None)
            .unwrap_err();
        assert!(err.to_string().contains("at most 2000 bytes"));
        assert!(
            Kind::parse("gossip")
                .unwrap_err()
                .to_string()
                .contains("preference, fact")
        );
    }
}
