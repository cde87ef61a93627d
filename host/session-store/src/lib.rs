//! Where sessions live on disk, under `$KAIZEN_HOME/sessions/<id>/`:
//!
//! - `meta.json`: what `kaizen sessions list` shows ([`SessionMeta`]);
//! - `events.jsonl`: the append-only log, one JSON value per line, written
//!   as the run goes (see [`log`]);
//! - `checkpoints/`: snapshots of the whole state, checksummed and written
//!   atomically, the last few kept (see [`checkpoint`]);
//! - `files/`: files' contents from before tools changed them, for rewind
//!   (see [`files`]).
//!
//! The store is generic over what it keeps; it knows nothing of the loop.
//! Every byte it writes first has the configured secrets replaced, so a
//! provider key that slipped into a message never reaches the disk.

mod beneath;
pub mod checkpoint;
pub mod files;
pub mod log;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub use checkpoint::{CheckpointInfo, Loaded, Recovery};
pub use files::Restore;
pub use log::{EventsRead, LogWriter};

/// What replaces a secret in everything the store writes.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not redacted: they would match ordinary
/// text.
const MIN_SECRET_LEN: usize = 8;

/// Why the store could not do something; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session has this id.
    #[error("no session `{id}` under {root}; `kaizen sessions list` shows them")]
    NotFound {
        /// The id asked for.
        id: String,
        /// The store's root.
        root: PathBuf,
    },
    /// The id cannot name a session directory.
    #[error(
        "`{0}` is not a session id: ids are letters, digits, `-`, `_` and `.` (not starting with `.`)"
    )]
    InvalidId(String),
    /// A session with this id exists already.
    #[error("a session `{0}` exists already")]
    Exists(String),
    /// Something on disk is not what the store wrote.
    #[error("{0}")]
    Corrupt(String),
    /// The filesystem failed.
    #[error("{what}: {source}")]
    Io {
        /// What the store was doing.
        what: String,
        /// The error.
        source: io::Error,
    },
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// `source` while doing `what`.
pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> StoreError {
    let what = what.into();
    move |source| StoreError::Io { what, source }
}

/// Where a session came from, when it was forked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parent {
    /// The parent session.
    pub id: String,
    /// The parent's step the fork started from.
    pub step: u64,
}

/// What a session is, for listings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Its id.
    pub id: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// When it last changed (RFC 3339).
    pub updated: String,
    /// `running`, or how its last run ended.
    pub status: String,
    /// The task it began with.
    pub task: String,
    /// The model.
    pub model: String,
    /// The workspace.
    pub cwd: String,
    /// Model calls so far.
    pub cycles: u32,
    /// USD spent so far.
    pub cost_usd: f64,
    /// The session it was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Parent>,
    /// The planner its last run used (a name, or a plugin directory's
    /// absolute path), so that a resume goes on with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner: Option<String>,
    /// The external runtime that runs it (`claude-code`, ...), when not
    /// Kaizen's own loop: that runtime keeps the conversation, and this
    /// session has no log of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// That runtime's own id for the session, to continue it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_session: Option<String>,
    /// The tokens that runtime's runs of the session used so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_tokens: Option<kaizen_protocol::TokensUsed>,
    /// The ingress of the cluster whose workers run it, when it runs on
    /// one (`kaizen run --cluster`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Where the session's audit log ended when its last run ended (the
    /// `audit` hook's), kept apart from the log so that entries removed
    /// from its end show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_end: Option<LogEnd>,
}

/// The end of a hash-chained log: its number of entries and the last
/// one's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEnd {
    /// How many entries it held.
    pub entries: u64,
    /// The last entry's hash.
    pub hash: String,
}

impl SessionMeta {
    /// A session starting now on `task`, running.
    pub fn new(
        id: impl Into<String>,
        task: impl Into<String>,
        model: impl Into<String>,
        cwd: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            started: now(),
            updated: now(),
            status: "running".into(),
            task: task.into(),
            model: model.into(),
            cwd: cwd.into(),
            cycles: 0,
            cost_usd: 0.0,
            parent: None,
            planner: None,
            runtime: None,
            runtime_session: None,
            runtime_tokens: None,
            cluster: None,
            audit_end: None,
        }
    }
}

/// Sessions under one root directory.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
    secrets: Vec<String>,
    checkpoint: checkpoint::Settings,
}

impl SessionStore {
    /// The store at `root` (`$KAIZEN_HOME/sessions`), created if missing,
    /// readable only by its owner.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self> {
        let root = root.into();
        create_private_dir(&root)?;
        Ok(Self {
            root,
            secrets: Vec::new(),
            checkpoint: checkpoint::Settings::default(),
        })
    }

    /// Replaces each of `secrets` (those of 8 bytes or more) with
    /// [`REDACTED`] in everything written from now on.
    pub fn with_secrets(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        self.secrets = secrets
            .into_iter()
            .filter(|secret| secret.len() >= MIN_SECRET_LEN)
            .flat_map(|secret| encoded_forms(&secret))
            .collect();
        // Longest first, so a form is never cut by a shorter one inside it.
        self.secrets
            .sort_by_key(|form| std::cmp::Reverse(form.len()));
        self.secrets.dedup();
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

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The log of session `id` (what hooks get as `transcript_path`).
    pub fn transcript_path(&self, id: &str) -> Result<PathBuf> {
        Ok(self.dir(id)?.join(log::LOG))
    }

    /// The directory of session `id`, which must exist.
    pub fn dir(&self, id: &str) -> Result<PathBuf> {
        let dir = self.root.join(valid_id(id)?);
        if dir.join("meta.json").is_file() {
            Ok(dir)
        } else {
            Err(StoreError::NotFound {
                id: id.to_string(),
                root: self.root.clone(),
            })
        }
    }

    /// Starts keeping a new session described by `meta`.
    pub fn create(&self, meta: &SessionMeta) -> Result<()> {
        let dir = self.root.join(valid_id(&meta.id)?);
        match fs::create_dir(&dir) {
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                return Err(StoreError::Exists(meta.id.clone()));
            }
            other => other.map_err(io_error(format!("creating {}", dir.display())))?,
        }
        self.write_meta(&dir, meta)
    }

    /// The metadata of session `id`.
    pub fn meta(&self, id: &str) -> Result<SessionMeta> {
        let path = self.dir(id)?.join("meta.json");
        let text =
            fs::read_to_string(&path).map_err(io_error(format!("reading {}", path.display())))?;
        serde_json::from_str(&text).map_err(|err| {
            StoreError::Corrupt(format!(
                "{} is not valid session metadata ({err})",
                path.display()
            ))
        })
    }

    /// Changes session `id`'s metadata with `change`; `updated` is set to
    /// now.
    pub fn update_meta(&self, id: &str, change: impl FnOnce(&mut SessionMeta)) -> Result<()> {
        let mut meta = self.meta(id)?;
        change(&mut meta);
        meta.updated = now();
        self.write_meta(&self.dir(id)?, &meta)
    }

    fn write_meta(&self, dir: &Path, meta: &SessionMeta) -> Result<()> {
        let json = serde_json::to_vec_pretty(meta).expect("metadata serializes");
        atomic_write(&dir.join("meta.json"), &self.redact(json))
    }

    /// Every session's metadata, most recently started first; sessions
    /// whose metadata cannot be read are left out.
    pub fn list(&self) -> Result<Vec<SessionMeta>> {
        let entries = fs::read_dir(&self.root)
            .map_err(io_error(format!("listing {}", self.root.display())))?;
        let mut sessions: Vec<SessionMeta> = entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                self.meta(&name).ok()
            })
            .collect();
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
                    root: self.root.clone(),
                });
        }
        self.dir(name)?;
        Ok(name.to_string())
    }

    /// Deletes session `id` and everything kept for it.
    pub fn remove(&self, id: &str) -> Result<()> {
        let dir = self.dir(id)?;
        fs::remove_dir_all(&dir).map_err(io_error(format!("removing {}", dir.display())))
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
        let mut bytes = bytes;
        for secret in &self.secrets {
            bytes = replace_all(bytes, secret.as_bytes(), REDACTED.as_bytes());
        }
        bytes
    }

    /// `value` as JSON text with the secrets replaced; an error names
    /// what could not be serialized.
    pub fn to_json<T: Serialize>(&self, value: &T, what: &str) -> Result<Vec<u8>> {
        let json = serde_json::to_vec(value)
            .map_err(|err| StoreError::Corrupt(format!("{what} cannot be serialized: {err}")))?;
        Ok(self.redact(json))
    }
}

/// The ways `secret` can appear in what a session keeps: as it is, escaped
/// in JSON, percent-encoded in a URL, and inside base64 (standard and
/// URL-safe) at each of the three byte alignments, where only the
/// characters that depend on the secret alone are matched.
fn encoded_forms(secret: &str) -> Vec<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut forms = vec![secret.to_string()];
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json.trim_matches('"').to_string());
    }
    let percent: String = secret
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    forms.push(percent);
    for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
        for offset in 0..3usize {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(secret.as_bytes());
            let encoded = engine.encode(&bytes);
            // Characters touched by the padding bytes before, or by what
            // follows the secret, vary with the surroundings.
            let skip = (offset * 4).div_ceil(3);
            let keep = (bytes.len() / 3) * 4;
            if keep > skip + MIN_SECRET_LEN {
                forms.push(encoded[skip..keep].to_string());
            }
        }
    }
    forms.retain(|form| form.len() >= MIN_SECRET_LEN);
    forms
}

/// Decodes JSON the store wrote; an error names `what` it was.
pub(crate) fn from_json<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|err| StoreError::Corrupt(format!("{what} does not decode: {err}")))
}

/// The current time in RFC 3339, for metadata.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `id` when it can name a directory under the root and nothing else.
fn valid_id(id: &str) -> Result<&str> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(id)
    } else {
        Err(StoreError::InvalidId(id.to_string()))
    }
}

fn replace_all(haystack: Vec<u8>, needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut found = memchr::memmem::find_iter(&haystack, needle).peekable();
    if found.peek().is_none() {
        return haystack;
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut from = 0;
    for at in found {
        out.extend_from_slice(&haystack[from..at]);
        out.extend_from_slice(with);
        from = at + needle.len();
    }
    out.extend_from_slice(&haystack[from..]);
    out
}

/// Creates `dir` (and its parents) readable only by its owner.
pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(io_error(format!("creating {}", dir.display())))
}

/// Writes `bytes` to `path` so that a crash leaves either the old file or
/// the new one: a temporary file in the same directory, fsynced, renamed
/// over `path`, then the directory fsynced.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let what = || format!("writing {}", path.display());
    let (temp, mut file) = tempfile_in(dir).map_err(io_error(what()))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temp, path));
    if let Err(err) = written {
        // Best effort: a leftover temporary file is ignored by readers.
        let _ = fs::remove_file(&temp);
        return Err(io_error(what())(err));
    }
    sync_dir(dir).map_err(io_error(what()))
}

/// A new file in `dir` with a unique name.
fn tempfile_in(dir: &Path) -> io::Result<(PathBuf, fs::File)> {
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    for attempt in 0..100u32 {
        let path = dir.join(format!(".tmp-{}-{stamp}-{attempt}", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::other("no free temporary file name"))
}

/// Makes a rename in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests;
