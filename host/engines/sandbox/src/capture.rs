//! Bounded output buffers: one for a command's whole output (keeps head and
//! tail), one for a background job's unread output (keeps the newest).

use std::collections::VecDeque;

/// Keeps the first and last halves of a stream of at most `cap` bytes kept.
#[derive(Debug)]
pub(crate) struct HeadTail {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl HeadTail {
    /// An empty buffer keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        HeadTail {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
        }
    }

    /// Appends a chunk, dropping from the middle once over the cap.
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        let head_cap = self.cap / 2;
        if self.head.len() < head_cap {
            let n = data.len().min(head_cap - self.head.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        let tail_cap = self.cap - head_cap;
        if data.len() >= tail_cap {
            // The chunk alone fills the tail: skip straight to its end.
            self.omitted += (self.tail.len() + data.len() - tail_cap) as u64;
            self.tail.clear();
            data = &data[data.len() - tail_cap..];
        } else {
            let over = (self.tail.len() + data.len()).saturating_sub(tail_cap);
            self.tail.drain(..over);
            self.omitted += over as u64;
        }
        self.tail.extend(data);
    }

    /// Whether anything was dropped.
    pub(crate) fn truncated(&self) -> bool {
        self.omitted > 0
    }

    /// The kept bytes, with a marker line where bytes were dropped.
    pub(crate) fn finish(self) -> Vec<u8> {
        let mut out = self.head;
        if self.omitted > 0 {
            if out.last().is_some_and(|&b| b != b'\n') {
                out.push(b'\n');
            }
            out.extend_from_slice(format!("[... {} bytes omitted ...]\n", self.omitted).as_bytes());
        }
        out.extend(self.tail);
        out
    }
}

/// A job's unread output: the newest `cap` bytes, counting what was dropped.
#[derive(Debug, Default)]
pub(crate) struct Unread {
    data: VecDeque<u8>,
    dropped: u64,
}

impl Unread {
    /// Appends a chunk, dropping the oldest bytes beyond `cap`.
    pub(crate) fn push(&mut self, chunk: &[u8], cap: usize) {
        self.data.extend(chunk);
        let over = self.data.len().saturating_sub(cap);
        if over > 0 {
            self.data.drain(..over);
            self.dropped += over as u64;
        }
    }

    /// Takes everything unread, led by a marker line if bytes were dropped.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.data.len() + 64);
        if self.dropped > 0 {
            out.extend_from_slice(
                format!(
                    "[... {} earlier bytes dropped: not read in time ...]\n",
                    self.dropped
                )
                .as_bytes(),
            );
            self.dropped = 0;
        }
        out.extend(self.data.drain(..));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends() {
        let mut b = HeadTail::new(10);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"qrst"] {
            b.push(chunk);
        }
        assert!(b.truncated());
        let out = String::from_utf8(b.finish()).unwrap();
        assert!(
            out.starts_with("abcde\n[... 10 bytes omitted ...]\n"),
            "{out}"
        );
        assert!(out.ends_with("pqrst"), "{out}");
    }

    #[test]
    fn head_tail_under_cap_is_verbatim() {
        let mut b = HeadTail::new(10);
        b.push(b"0123456789");
        assert!(!b.truncated());
        assert_eq!(b.finish(), b"0123456789");
    }

    #[test]
    fn unread_drops_oldest() {
        let mut u = Unread::default();
        u.push(b"12345", 4);
        u.push(b"67", 4);
        assert_eq!(
            u.take(),
            b"[... 3 earlier bytes dropped: not read in time ...]\n4567"
        );
        assert_eq!(u.take(), b"");
    }
}
