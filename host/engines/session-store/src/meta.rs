//! What a session is, for listings: [`SessionMeta`], kept as `meta.json`.

use crate::now;
use serde::{Deserialize, Serialize};

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
