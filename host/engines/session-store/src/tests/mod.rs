//! The store's tests, each run against every storage: the directory
//! layout and [`memory::MemoryStorage`]. Damage is done through the
//! [`Storage`] trait, so that the same test covers both.

mod checkpoints;
mod log;
mod memory;
mod on_disk;
mod rewind;
mod secrets;
mod sessions;

use crate::storage::Storage;
use crate::{FileStorage, SessionMeta, SessionStore, now};
use memory::MemoryStorage;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A store, its storage, and what keeps the storage alive.
struct Fixture {
    store: SessionStore,
    storage: Arc<dyn Storage>,
    kept: Kept,
}

enum Kept {
    Files(tempfile::TempDir),
    Memory(Arc<MemoryStorage>),
}

impl Fixture {
    fn files() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let storage: Arc<dyn Storage> =
            Arc::new(FileStorage::open(dir.path().join("sessions")).unwrap());
        Self {
            store: SessionStore::new(storage.clone()),
            storage,
            kept: Kept::Files(dir),
        }
    }

    fn memory() -> Self {
        let memory = Arc::new(MemoryStorage::new());
        let storage: Arc<dyn Storage> = memory.clone();
        Self {
            store: SessionStore::new(storage.clone()),
            storage,
            kept: Kept::Memory(memory),
        }
    }

    fn is_files(&self) -> bool {
        matches!(self.kept, Kept::Files(_))
    }

    /// Every byte the storage holds, each piece with a name.
    fn held(&self) -> Vec<(String, Vec<u8>)> {
        match &self.kept {
            Kept::Files(dir) => walk(dir.path())
                .into_iter()
                .map(|path| (path.display().to_string(), fs::read(&path).unwrap()))
                .collect(),
            Kept::Memory(memory) => memory.held(),
        }
    }

    /// Session `id`'s checkpoint `n` (oldest first): its sequence number.
    fn checkpoint_seq(&self, id: &str, n: usize) -> u64 {
        self.storage.checkpoints(id).unwrap()[n]
    }

    /// Replaces session `id`'s log with `bytes`, behind the store's back.
    fn set_log(&self, id: &str, bytes: &[u8]) {
        self.storage.truncate_log(id, 0).unwrap();
        self.storage.open_log(id).unwrap().append(bytes).unwrap();
    }
}

/// A store is shared by the loop's threads, its log writer too.
#[test]
fn the_store_and_its_log_writer_cross_threads() {
    fn shared<T: Send + Sync + Clone>() {}
    fn sent<T: Send + Sync>() {}
    shared::<SessionStore>();
    sent::<crate::LogWriter>();
}

/// Runs `test` with a store over each storage.
fn each(test: impl Fn(Fixture)) {
    for fixture in [Fixture::files(), Fixture::memory()] {
        // Shown with a failure, to say which storage it was.
        eprintln!("storage: {:?}", fixture.storage);
        test(fixture);
    }
}

/// Runs `test` with a store over each storage, holding session `id`.
fn each_with_session(id: &str, test: impl Fn(Fixture)) {
    each(|fixture| {
        fixture.store.create(&meta(id, &now())).unwrap();
        test(fixture);
    });
}

fn meta(id: &str, started: &str) -> SessionMeta {
    SessionMeta {
        started: started.into(),
        updated: started.into(),
        ..SessionMeta::new(id, "a task", "m", "/w")
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
