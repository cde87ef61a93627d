//! Messages sent while a run works (`--input-format stream-json`, an
//! embedding program): each joins the conversation before the next model
//! call, never in the middle of a step, and a run does not end while one
//! waits.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A run's queue of messages from outside; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Inbox(Arc<Mutex<VecDeque<String>>>);

impl Inbox {
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
    }
}
