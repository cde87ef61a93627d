//! The per-URL cache: a page fetched in the last 15 minutes is served
//! again without a request.
//!
//! It lives in the plugin instance. The manifest says `stateful = true`,
//! so the host keeps one instance per session: the cache is the session's
//! own (no page leaks between sessions) and needs no host interface. It is
//! a speed-up only, so losing it (a new session, an instance discarded
//! after a trap) costs one request, never a wrong answer.

use std::time::{Duration, Instant};

use crate::fetch::Page;

/// How long a page is served from the cache.
pub const TTL: Duration = Duration::from_secs(15 * 60);

/// The most pages kept.
const MAX_ENTRIES: usize = 64;

/// The most text kept, over all pages.
const MAX_BYTES: usize = 32 << 20;

/// Pages by the URL they were requested as.
#[derive(Debug, Default)]
pub struct Cache {
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    key: String,
    fetched: Instant,
    page: Page,
}

impl Cache {
    /// An empty cache.
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    /// The page stored for `key` and when it was fetched, unless it is
    /// older than [`TTL`] at `now`.
    pub fn get(&mut self, key: &str, now: Instant) -> Option<(Page, Instant)> {
        self.expire(now);
        self.entries
            .iter()
            .find(|entry| entry.key == key)
            .map(|entry| (entry.page.clone(), entry.fetched))
    }

    /// Stores `page` under `key`, fetched at `now`, dropping the oldest
    /// pages when the cache is full.
    pub fn put(&mut self, key: String, page: Page, now: Instant) {
        self.expire(now);
        self.entries.retain(|entry| entry.key != key);
        if page.text.len() > MAX_BYTES {
            return;
        }
        self.entries.push(Entry {
            key,
            fetched: now,
            page,
        });
        while self.entries.len() > MAX_ENTRIES || self.bytes() > MAX_BYTES {
            self.entries.remove(0);
        }
    }

    fn expire(&mut self, now: Instant) {
        self.entries
            .retain(|entry| now.saturating_duration_since(entry.fetched) < TTL);
    }

    fn bytes(&self) -> usize {
        self.entries.iter().map(|entry| entry.page.text.len()).sum()
    }
}
