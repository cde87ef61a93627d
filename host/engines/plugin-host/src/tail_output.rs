//! A plugin's stderr: kept in memory, only the last bytes, and never full,
//! so a chatty plugin neither fills the host's memory nor fails its writes
//! (Rust's `eprintln!` panics when stderr refuses a write).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Keeps the last `capacity` bytes written to it.
#[derive(Clone)]
pub(crate) struct TailOutput {
    capacity: usize,
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl TailOutput {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            buffer: Arc::default(),
        }
    }

    /// What was kept, lossily decoded.
    pub fn text(&self) -> String {
        let buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&buffer).into_owned()
    }

    fn push(&self, bytes: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = &bytes[bytes.len().saturating_sub(self.capacity)..];
        let overflow = (buffer.len() + bytes.len()).saturating_sub(self.capacity);
        buffer.drain(..overflow);
        buffer.extend_from_slice(bytes);
    }
}

impl IsTerminal for TailOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TailOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl AsyncWrite for TailOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail() {
        let out = TailOutput::new(8);
        out.push(b"hello ");
        out.push(b"world");
        assert_eq!(out.text(), "lo world");
        out.push(b"0123456789abc");
        assert_eq!(out.text(), "56789abc");
    }
}
