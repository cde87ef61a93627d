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

/// The default pause between streamed frames, so that a client reads them
/// as they come rather than all at once.
pub(crate) const PACE: Duration = Duration::from_millis(1);

/// The pause before a truncated body breaks the connection, so that hyper
/// flushes what was sent first. Kept even without pacing: a truncation must
/// deliver its partial answer to be a truncation.
const FLUSH: Duration = Duration::from_millis(1);

/// A scripted response body.
pub(crate) struct ScriptedBody {
    frames: VecDeque<Bytes>,
    /// After the frames, fail instead of ending: hyper then closes the
    /// connection without finishing the message.
    abort: bool,
    /// Sent chunked (no `content-length`), as a stream.
    chunked: bool,
    /// The pause between frames; `None` sends them back to back.
    pace: Option<Duration>,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl ScriptedBody {
    /// A complete body in one frame, with an exact length (so hyper sends
    /// `content-length`).
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            frames: VecDeque::from([bytes.into()]),
            abort: false,
            chunked: false,
            pace: None,
            sleep: None,
        }
    }

    /// A streamed body (chunked). With a `pace`, each event goes out in two
    /// frames, split at the middle byte, with that pause between frames, so
    /// clients meet events split across reads as they do on real networks.
    /// Without one, each event is one frame and nothing waits (zero
    /// latency).
    pub fn stream(events: Vec<Bytes>, pace: Option<Duration>) -> Self {
        Self {
            frames: frames(events, pace),
            abort: false,
            chunked: true,
            pace,
            sleep: None,
        }
    }

    /// Sends `events` as [`ScriptedBody::stream`] does, then breaks the
    /// connection, after a short pause that lets hyper flush what was sent.
    pub fn aborted(events: Vec<Bytes>, pace: Option<Duration>) -> Self {
        Self {
            frames: frames(events, pace),
            abort: true,
            chunked: true,
            pace,
            sleep: None,
        }
    }
}

/// The frames for `events`: when paced, every event split in two at its
/// middle byte (UTF-8 characters included: clients must reassemble bytes
/// before decoding); otherwise one frame per event.
fn frames(events: Vec<Bytes>, pace: Option<Duration>) -> VecDeque<Bytes> {
    if pace.is_none() {
        return events.into();
    }
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
            let pause = if this.frames.is_empty() {
                this.abort.then_some(this.pace.unwrap_or(FLUSH))
            } else {
                this.pace
            };
            if let Some(pause) = pause {
                this.sleep = Some(Box::pin(tokio::time::sleep(pause)));
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
        if self.chunked || self.abort {
            return SizeHint::default();
        }
        SizeHint::with_exact(self.frames.iter().map(|f| f.len() as u64).sum())
    }
}
