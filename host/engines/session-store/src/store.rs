//! [`SessionStore`]: sessions' metadata over a [`Storage`], with the
//! policy the storage does not know (ids, redaction, listing order,
//! pruning).

use crate::checkpoint;
use crate::file_storage::FileStorage;
use crate::redact::Redactor;
use crate::storage::{Item, Storage};
use crate::{Result, SessionMeta, StoreError, io_error, is_session_id, now};
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Sessions kept in a [`Storage`]: a directory (`$KAIZEN_HOME/sessions`,
/// [`Self::open`]) or any other ([`Self::new`]).
#[derive(Debug, Clone)]
pub struct SessionStore {
    pub(crate) storage: Arc<dyn Storage>,
    redactor: Redactor,
    pub(crate) checkpoint: checkpoint::Settings,
}

impl SessionStore {
    /// The store at `root` (`$KAIZEN_HOME/sessions`), created if missing,
    /// readable only by its owner.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self> {
        Ok(Self::new(Arc::new(FileStorage::open(root)?)))
    }

    /// The store over `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Self {
            storage,
            redactor: Redactor::default(),
            checkpoint: checkpoint::Settings::default(),
        }
    }

    /// Replaces each of `secrets` (those of 8 bytes or more) with
    /// [`REDACTED`](crate::REDACTED) in everything written from now on.
    pub fn with_secrets(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        self.redactor = Redactor::new(secrets);
        self
    }

    /// How many checkpoints to keep per session (at least 1) and above
    /// what size (bytes of JSON) to compress them.
    pub fn with_checkpoints(mut self, keep: usize, compress_above: usize) -> Self {
        self.checkpoint = checkpoint::Settings {
            keep: keep.max(1),
            compress_above,
        };
        self
    }

    /// The store's root directory (where its storage is).
    pub fn root(&self) -> &Path {
        self.storage.location()
    }

    /// The log of session `id` (what hooks get as `transcript_path`); an
    /// error when the storage keeps no directory for it.
    pub fn transcript_path(&self, id: &str) -> Result<PathBuf> {
        let log = Item::Log.relative_path().unwrap_or_default();
        Ok(self.dir(id)?.join(log))
    }

    /// The directory of session `id`, which must exist, on this machine; an
    /// error when the storage keeps none.
    pub fn dir(&self, id: &str) -> Result<PathBuf> {
        self.check(id)?;
        self.storage
            .local_dir(id)
            .ok_or_else(|| StoreError::NotLocal {
                id: id.to_string(),
                storage: self.root().to_path_buf(),
            })
    }

    /// Whether session `id` exists.
    pub fn exists(&self, id: &str) -> Result<bool> {
        if !is_session_id(id) {
            return Ok(false);
        }
        self.storage
            .exists(id)
            .map_err(io_error(format!("reading {}", self.at(id, Item::Meta))))
    }

    /// `id`, when session `id` exists: what every operation on a session
    /// checks first.
    pub(crate) fn check<'i>(&self, id: &'i str) -> Result<&'i str> {
        let id = valid_id(id)?;
        if self.exists(id)? {
            Ok(id)
        } else {
            Err(StoreError::NotFound {
                id: id.to_string(),
                root: self.root().to_path_buf(),
            })
        }
    }

    /// Where `item` of session `id` is, for messages.
    pub(crate) fn at(&self, id: &str, item: Item<'_>) -> String {
        self.storage.locate(id, item).display().to_string()
    }

    /// Starts keeping a new session described by `meta`.
    pub fn create(&self, meta: &SessionMeta) -> Result<()> {
        let id = valid_id(&meta.id)?;
        let bytes = self.meta_bytes(meta)?;
        match self.storage.create(id, &bytes) {
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                Err(StoreError::Exists(meta.id.clone()))
            }
            other => other.map_err(io_error(format!("creating {}", self.at(id, Item::Session)))),
        }
    }

    /// The metadata of session `id`.
    pub fn meta(&self, id: &str) -> Result<SessionMeta> {
        let id = self.check(id)?;
        let path = self.at(id, Item::Meta);
        let bytes = self
            .storage
            .read_meta(id)
            .map_err(io_error(format!("reading {path}")))?
            .ok_or_else(|| StoreError::NotFound {
                id: id.to_string(),
                root: self.root().to_path_buf(),
            })?;
        serde_json::from_slice(&bytes).map_err(|err| {
            StoreError::Corrupt(format!("{path} is not valid session metadata ({err})"))
        })
    }

    /// Changes session `id`'s metadata with `change`; `updated` is set to
    /// now.
    pub fn update_meta(&self, id: &str, change: impl FnOnce(&mut SessionMeta)) -> Result<()> {
        let mut meta = self.meta(id)?;
        change(&mut meta);
        meta.updated = now();
        let bytes = self.meta_bytes(&meta)?;
        self.storage
            .write_meta(id, &bytes)
            .map_err(io_error(format!("writing {}", self.at(id, Item::Meta))))
    }

    /// `meta` as the store keeps it: pretty JSON, redacted.
    fn meta_bytes(&self, meta: &SessionMeta) -> Result<Vec<u8>> {
        let json = serde_json::to_vec_pretty(meta).map_err(|err| {
            StoreError::Corrupt(format!("session metadata cannot be serialized: {err}"))
        })?;
        Ok(self.redact(json))
    }

    /// Every session's metadata, most recently started first; sessions
    /// whose metadata cannot be read are left out.
    pub fn list(&self) -> Result<Vec<SessionMeta>> {
        let ids = self
            .storage
            .sessions()
            .map_err(io_error(format!("listing {}", self.root().display())))?;
        let mut sessions: Vec<SessionMeta> =
            ids.iter().filter_map(|id| self.meta(id).ok()).collect();
        sessions.sort_by(|a, b| b.started.cmp(&a.started).then(b.id.cmp(&a.id)));
        Ok(sessions)
    }

    /// The id `name` stands for: `last` is the most recently started
    /// session; anything else must be an existing session's id.
    pub fn resolve(&self, name: &str) -> Result<String> {
        if name == "last" {
            return self
                .list()?
                .into_iter()
                .next()
                .map(|meta| meta.id)
                .ok_or_else(|| StoreError::NotFound {
                    id: name.to_string(),
                    root: self.root().to_path_buf(),
                });
        }
        self.check(name)?;
        Ok(name.to_string())
    }

    /// Deletes session `id` and everything kept for it.
    pub fn remove(&self, id: &str) -> Result<()> {
        let id = self.check(id)?;
        self.storage
            .remove(id)
            .map_err(io_error(format!("removing {}", self.at(id, Item::Session))))
    }

    /// Deletes the sessions last updated longer than `age` ago; their ids.
    pub fn prune(&self, age: Duration) -> Result<Vec<String>> {
        let cutoff =
            chrono::Utc::now() - chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX);
        let mut removed = Vec::new();
        for meta in self.list()? {
            let updated = chrono::DateTime::parse_from_rfc3339(&meta.updated);
            if updated.is_ok_and(|at| at < cutoff) {
                self.remove(&meta.id)?;
                removed.push(meta.id);
            }
        }
        Ok(removed)
    }

    /// `bytes` with every secret replaced.
    pub(crate) fn redact(&self, bytes: Vec<u8>) -> Vec<u8> {
        self.redactor.redact(bytes)
    }

    /// `value` as JSON text with the secrets replaced; an error names
    /// what could not be serialized.
    pub fn to_json<T: Serialize>(&self, value: &T, what: &str) -> Result<Vec<u8>> {
        let json = serde_json::to_vec(value)
            .map_err(|err| StoreError::Corrupt(format!("{what} cannot be serialized: {err}")))?;
        Ok(self.redact(json))
    }
}

/// `id` when it can name a session; [`StoreError::InvalidId`] otherwise.
fn valid_id(id: &str) -> Result<&str> {
    if is_session_id(id) {
        Ok(id)
    } else {
        Err(StoreError::InvalidId(id.to_string()))
    }
}
