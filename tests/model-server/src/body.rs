//! The response body: a list of frames, optionally paced, optionally ending
//! in an error that makes hyper drop the connection (a truncated answer).

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::time::Sleep;

/// The pause between streamed frames, so that a client reads them as they
/// come rather than all at once.
const PACE: Duration = Duration::from_millis(1);

/// A scripted response body.
pub(crate) struct ScriptedBody {
    frames: VecDeque<Bytes>,
    /// After the frames, fail instead of ending: hyper then closes the
    /// connection without finishing the message.
    abort: bool,
    paced: bool,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl ScriptedBody {
    /// A complete body in one frame, with an exact length (so hyper sends
    /// `content-length`).
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            frames: VecDeque::from([bytes.into()]),
            abort: false,
            paced: false,
            sleep: None,
        }
    }

    /// A streamed body (chunked): each event goes out in two frames, split
    /// at the middle byte, with a short pause between frames, so clients
    /// meet events split across reads as they do on real networks.
    pub fn stream(events: Vec<Bytes>) -> Self {
        Self {
            frames: halves(events),
            abort: false,
            paced: true,
            sleep: None,
        }
    }

    /// Sends `events` as [`ScriptedBody::stream`] does, then breaks the
    /// connection. The pause before the break lets hyper flush what was
    /// sent.
    pub fn aborted(events: Vec<Bytes>) -> Self {
        Self {
            frames: halves(events),
            abort: true,
            paced: true,
            sleep: None,
        }
    }
}

/// Splits every event in two at its middle byte (UTF-8 characters
/// included: clients must reassemble bytes before decoding).
fn halves(events: Vec<Bytes>) -> VecDeque<Bytes> {
    let mut frames = VecDeque::with_capacity(events.len() * 2);
    for event in events {
        let mid = event.len() / 2;
        if mid > 0 {
            frames.push_back(event.slice(..mid));
        }
        frames.push_back(event.slice(mid..));
    }
    frames
}

impl Body for ScriptedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if let Some(sleep) = &mut this.sleep {
            ready!(sleep.as_mut().poll(cx));
            this.sleep = None;
        }
        if let Some(frame) = this.frames.pop_front() {
            if this.paced && (!this.frames.is_empty() || this.abort) {
                this.sleep = Some(Box::pin(tokio::time::sleep(PACE)));
            }
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        if std::mem::take(&mut this.abort) {
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "scripted truncation",
            ))));
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty() && !self.abort
    }

    fn size_hint(&self) -> SizeHint {
        if self.paced || self.abort {
            return SizeHint::default();
        }
        SizeHint::with_exact(self.frames.iter().map(|f| f.len() as u64).sum())
    }
}
