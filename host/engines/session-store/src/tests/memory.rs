//! A storage in memory: the proof that [`Storage`] is all the store needs,
//! and a place where every byte the store handed down can be looked at.

use crate::storage::{LogSink, Storage};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

type Sessions = Arc<Mutex<BTreeMap<String, Session>>>;

/// Sessions in a map.
#[derive(Debug)]
pub struct MemoryStorage {
    location: PathBuf,
    sessions: Sessions,
}

#[derive(Debug, Default)]
struct Session {
    meta: Vec<u8>,
    log: Vec<u8>,
    checkpoints: BTreeMap<u64, Vec<u8>>,
    index: Vec<u8>,
    objects: BTreeMap<String, Vec<u8>>,
}

fn not_found(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, what)
}

fn lock(sessions: &Sessions) -> MutexGuard<'_, BTreeMap<String, Session>> {
    sessions.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `change` on session `id`, which must exist.
fn with<R>(
    sessions: &Sessions,
    id: &str,
    change: impl FnOnce(&mut Session) -> io::Result<R>,
) -> io::Result<R> {
    let mut sessions = lock(sessions);
    let session = sessions
        .get_mut(id)
        .ok_or_else(|| not_found(format!("no session {id}")))?;
    change(session)
}

impl MemoryStorage {
    /// An empty storage.
    pub fn new() -> Self {
        Self {
            location: PathBuf::from("memory:"),
            sessions: Arc::default(),
        }
    }

    /// Every byte held, each piece with a name saying what it is.
    pub fn held(&self) -> Vec<(String, Vec<u8>)> {
        let mut held = Vec::new();
        for (id, session) in lock(&self.sessions).iter() {
            held.push((format!("{id}/meta"), session.meta.clone()));
            held.push((format!("{id}/log"), session.log.clone()));
            held.push((format!("{id}/index"), session.index.clone()));
            for (seq, bytes) in &session.checkpoints {
                held.push((format!("{id}/checkpoint {seq}"), bytes.clone()));
            }
            for (name, bytes) in &session.objects {
                held.push((format!("{id}/object {name}"), bytes.clone()));
            }
        }
        held
    }

    fn with<R>(&self, id: &str, f: impl FnOnce(&mut Session) -> io::Result<R>) -> io::Result<R> {
        with(&self.sessions, id, f)
    }
}

impl Storage for MemoryStorage {
    fn location(&self) -> &Path {
        &self.location
    }

    fn sessions(&self) -> io::Result<Vec<String>> {
        Ok(lock(&self.sessions).keys().cloned().collect())
    }

    fn create(&self, id: &str, meta: &[u8]) -> io::Result<()> {
        let mut sessions = lock(&self.sessions);
        if sessions.contains_key(id) {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        let session = Session {
            meta: meta.to_vec(),
            ..Session::default()
        };
        sessions.insert(id.to_string(), session);
        Ok(())
    }

    fn read_meta(&self, id: &str) -> io::Result<Option<Vec<u8>>> {
        Ok(lock(&self.sessions).get(id).map(|s| s.meta.clone()))
    }

    fn write_meta(&self, id: &str, meta: &[u8]) -> io::Result<()> {
        self.with(id, |s| {
            s.meta = meta.to_vec();
            Ok(())
        })
    }

    fn remove(&self, id: &str) -> io::Result<()> {
        lock(&self.sessions)
            .remove(id)
            .map(drop)
            .ok_or_else(|| not_found(format!("no session {id}")))
    }

    fn read_log(&self, id: &str) -> io::Result<Vec<u8>> {
        self.with(id, |s| Ok(s.log.clone()))
    }

    fn open_log(&self, id: &str) -> io::Result<Box<dyn LogSink>> {
        self.with(id, |_| Ok(()))?;
        Ok(Box::new(MemoryLog {
            sessions: self.sessions.clone(),
            id: id.to_string(),
        }))
    }

    fn truncate_log(&self, id: &str, len: u64) -> io::Result<()> {
        self.with(id, |s| {
            s.log.truncate(len as usize);
            Ok(())
        })
    }

    fn checkpoints(&self, id: &str) -> io::Result<Vec<u64>> {
        self.with(id, |s| Ok(s.checkpoints.keys().copied().collect()))
    }

    fn read_checkpoint(&self, id: &str, seq: u64) -> io::Result<Vec<u8>> {
        self.with(id, |s| {
            s.checkpoints
                .get(&seq)
                .cloned()
                .ok_or_else(|| not_found(format!("no checkpoint {seq}")))
        })
    }

    fn write_checkpoint(&self, id: &str, seq: u64, bytes: &[u8]) -> io::Result<()> {
        self.with(id, |s| {
            s.checkpoints.insert(seq, bytes.to_vec());
            Ok(())
        })
    }

    fn remove_checkpoint(&self, id: &str, seq: u64) -> io::Result<()> {
        self.with(id, |s| {
            s.checkpoints
                .remove(&seq)
                .map(drop)
                .ok_or_else(|| not_found(format!("no checkpoint {seq}")))
        })
    }

    fn read_file_index(&self, id: &str) -> io::Result<Vec<u8>> {
        self.with(id, |s| Ok(s.index.clone()))
    }

    fn append_file_index(&self, id: &str, line: &[u8]) -> io::Result<()> {
        self.with(id, |s| {
            s.index.extend_from_slice(line);
            Ok(())
        })
    }

    fn has_object(&self, id: &str, name: &str) -> io::Result<bool> {
        self.with(id, |s| Ok(s.objects.contains_key(name)))
    }

    fn read_object(&self, id: &str, name: &str) -> io::Result<Vec<u8>> {
        self.with(id, |s| {
            s.objects
                .get(name)
                .cloned()
                .ok_or_else(|| not_found(format!("no object {name}")))
        })
    }

    fn write_object(&self, id: &str, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.with(id, |s| {
            s.objects.insert(name.to_string(), bytes.to_vec());
            Ok(())
        })
    }
}

/// A session's log in the map, appended to under the lock.
#[derive(Debug)]
struct MemoryLog {
    sessions: Sessions,
    id: String,
}

impl LogSink for MemoryLog {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        with(&self.sessions, &self.id, |s| {
            s.log.extend_from_slice(bytes);
            Ok(())
        })
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}
