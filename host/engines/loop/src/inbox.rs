//! Messages sent while a run works (`--input-format stream-json`, an
//! embedding program): each joins the conversation before the next model
//! call, never in the middle of a step, and a run does not end while one
//! waits. A request to compact the conversation, or to change the
//! permission mode, is taken at the same point.

use kaizen_protocol::PermissionMode;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A run's queue of messages from outside; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Inbox(
    Arc<Mutex<VecDeque<String>>>,
    /// A compaction asked for, with what its summary should keep.
    Arc<Mutex<Option<Vec<String>>>>,
    Arc<Mutex<Option<PermissionMode>>>,
);

impl Inbox {
    /// Asks for the session's permission mode to be `mode` from the next
    /// model call on (the last request wins).
    pub fn request_mode(&self, mode: PermissionMode) {
        *self.2.lock().unwrap_or_else(|e| e.into_inner()) = Some(mode);
    }

    /// The mode asked for since the last call, if any; the request is
    /// then taken.
    pub fn take_mode(&self) -> Option<PermissionMode> {
        self.2.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Asks for the conversation to be compacted before the next model
    /// call; `instructions`, if any, say what its summary should keep
    /// (Claude Code's `/compact Focus on the API changes`).
    pub fn request_compaction(&self, instructions: Option<String>) {
        let mut asked = self.1.lock().unwrap_or_else(|e| e.into_inner());
        asked.get_or_insert_default().extend(instructions);
    }

    /// The compaction asked for since the last call, with its
    /// instructions (none, or several requests'); the request is then
    /// taken.
    pub fn take_compaction(&self) -> Option<Vec<String>> {
        self.1.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Queues `text` for the next model call.
    pub fn send(&self, text: impl Into<String>) {
        self.lock().push_back(text.into());
    }

    /// Every queued message, oldest first; the queue is then empty.
    pub fn take_all(&self) -> Vec<String> {
        self.lock().drain(..).collect()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_out_in_order_once() {
        let inbox = Inbox::default();
        let sender = inbox.clone();
        sender.send("one");
        sender.send("two");
        assert!(!inbox.is_empty());
        assert_eq!(inbox.take_all(), ["one", "two"]);
        assert!(inbox.is_empty() && inbox.take_all().is_empty());
        assert_eq!(inbox.take_compaction(), None);
        sender.request_compaction(None);
        assert_eq!(inbox.take_compaction(), Some(Vec::new()));
        assert_eq!(inbox.take_compaction(), None);
        sender.request_compaction(Some("Keep the API.".into()));
        sender.request_compaction(None);
        assert_eq!(
            inbox.take_compaction(),
            Some(vec!["Keep the API.".to_string()])
        );
        assert_eq!(inbox.take_mode(), None);
        sender.request_mode(PermissionMode::Plan);
        sender.request_mode(PermissionMode::AcceptEdits);
        assert_eq!(inbox.take_mode(), Some(PermissionMode::AcceptEdits));
        assert_eq!(inbox.take_mode(), None);
    }
}
