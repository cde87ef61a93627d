//! Record and replay: a recording is the responses of a run, one JSON
//! [`Response`] per line, and replaying serves them back in order without a
//! network. Requests are not recorded, so neither are keys or headers.

use crate::types::{
    Block, CompletionFuture, CompletionsFuture, EventSink, LlmError, LlmErrorKind, Provider,
    Request, Response, StreamEvent,
};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

impl<P: Provider + ?Sized> Provider for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        (**self).complete(request, events)
    }

    fn complete_n<'a>(
        &'a self,
        request: &'a Request,
        n: u32,
        events: EventSink<'a>,
    ) -> CompletionsFuture<'a> {
        (**self).complete_n(request, n, events)
    }
}

impl<P: Provider + ?Sized> Provider for Arc<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        (**self).complete(request, events)
    }

    fn complete_n<'a>(
        &'a self,
        request: &'a Request,
        n: u32,
        events: EventSink<'a>,
    ) -> CompletionsFuture<'a> {
        (**self).complete_n(request, n, events)
    }
}

/// Wraps a provider and appends each successful response to a file.
#[derive(Debug)]
pub struct Recorder<P: Provider> {
    inner: P,
    path: PathBuf,
    file: Mutex<File>,
}

impl<P: Provider> Recorder<P> {
    /// Records `inner`'s responses to `path`, created if missing and
    /// appended to otherwise (a resumed run extends its recording).
    pub fn new(inner: P, path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Recorder {
            inner,
            path,
            file: Mutex::new(file),
        })
    }

    /// The wrapped provider.
    pub fn into_inner(self) -> P {
        self.inner
    }

    fn append(&self, response: &Response) -> Result<(), LlmError> {
        let failed = |error: &dyn std::fmt::Display| LlmError {
            kind: LlmErrorKind::Replay,
            message: format!(
                "could not record the response to {}: {error}",
                self.path.display()
            ),
        };
        let mut line = serde_json::to_string(response).map_err(|e| failed(&e))?;
        line.push('\n');
        // One write per line and a flush after each, so a killed run leaves
        // a recording of every response it got.
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.write_all(line.as_bytes()).map_err(|e| failed(&e))?;
        file.flush().map_err(|e| failed(&e))
    }
}

impl<P: Provider> Provider for Recorder<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let response = self.inner.complete(request, events).await?;
            self.append(&response)?;
            Ok(response)
        })
    }

    /// The inner provider's candidates (one request where it can), each
    /// recorded in order: a replay serves them back as separate calls.
    fn complete_n<'a>(
        &'a self,
        request: &'a Request,
        n: u32,
        events: EventSink<'a>,
    ) -> CompletionsFuture<'a> {
        Box::pin(async move {
            let mut answers = self.inner.complete_n(request, n, events).await;
            for answer in &mut answers {
                let unrecorded = match answer {
                    Ok(response) => self.append(response).err(),
                    Err(_) => None,
                };
                if let Some(err) = unrecorded {
                    *answer = Err(err);
                }
            }
            answers
        })
    }
}

/// Serves recorded responses in order, with no network.
#[derive(Debug)]
pub struct ReplayProvider {
    source: String,
    responses: Vec<Response>,
    next: AtomicUsize,
}

impl ReplayProvider {
    /// Loads a recording made by [`Recorder`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| LlmError {
            kind: LlmErrorKind::Replay,
            message: format!("could not read the recording {}: {error}", path.display()),
        })?;
        let mut responses = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let response = serde_json::from_str(line).map_err(|error| LlmError {
                kind: LlmErrorKind::Replay,
                message: format!(
                    "line {} of the recording {} is not a recorded response: {error}",
                    number + 1,
                    path.display()
                ),
            })?;
            responses.push(response);
        }
        Ok(ReplayProvider {
            source: path.display().to_string(),
            responses,
            next: AtomicUsize::new(0),
        })
    }

    /// Serves `responses` (for tests of the loop).
    pub fn from_responses(responses: Vec<Response>) -> Self {
        ReplayProvider {
            source: "in memory".into(),
            responses,
            next: AtomicUsize::new(0),
        }
    }

    /// How many responses the recording holds.
    pub fn len(&self) -> usize {
        self.responses.len()
    }

    /// Whether the recording holds no response.
    pub fn is_empty(&self) -> bool {
        self.responses.is_empty()
    }

    /// How many responses are left to serve.
    pub fn remaining(&self) -> usize {
        self.responses
            .len()
            .saturating_sub(self.next.load(Ordering::SeqCst))
    }
}

impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    fn complete<'a>(
        &'a self,
        _request: &'a Request,
        events: EventSink<'a>,
    ) -> CompletionFuture<'a> {
        // Taken at the call, not its first poll: candidates asked for at
        // once get the recording's responses in the order they were asked.
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let Some(response) = self.responses.get(index) else {
                return Err(LlmError {
                    kind: LlmErrorKind::Replay,
                    message: format!(
                        "the recording ({}) has {} responses; this run asked for more",
                        self.source,
                        self.responses.len()
                    ),
                });
            };
            // The same events a live call would have streamed.
            for block in &response.content {
                match block {
                    Block::Text { text } => events(StreamEvent::TextDelta(text.clone())),
                    Block::ToolUse { id, name, .. } => events(StreamEvent::ToolCallStarted {
                        id: id.clone(),
                        name: name.clone(),
                    }),
                    Block::Image { .. } | Block::ToolResult { .. } => {}
                }
            }
            Ok(response.clone())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{StopReason, Usage};

    fn response(text: &str) -> Response {
        Response {
            content: vec![
                Block::Text { text: text.into() },
                Block::ToolUse {
                    id: "call_1".into(),
                    name: "Bash".into(),
                    arguments: "{\"command\":".into(),
                },
            ],
            usage: Usage {
                input_tokens: 3,
                output_tokens: 4,
                cache_read_tokens: 5,
                cache_write_tokens: 6,
            },
            stop_reason: StopReason::Other("pause_turn".into()),
            model: "m".into(),
        }
    }

    fn request() -> Request {
        Request {
            model: "m".into(),
            system: String::new(),
            messages: vec![],
            tools: vec![],
            max_tokens: 1,
            temperature: None,
        }
    }

    #[tokio::test]
    async fn record_then_replay() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("run.jsonl");
        let sink = |_: StreamEvent| {};
        let recorded = vec![response("one"), response("two")];
        let recorder = Recorder::new(ReplayProvider::from_responses(recorded.clone()), &path)
            .expect("recorder");
        for _ in 0..2 {
            recorder.complete(&request(), &sink).await.expect("served");
        }
        assert!(recorder.complete(&request(), &sink).await.is_err());
        assert_eq!(
            std::fs::read_to_string(&path)
                .expect("file")
                .lines()
                .count(),
            2
        );

        let replay = ReplayProvider::open(&path).expect("open");
        assert_eq!(replay.len(), 2);
        let seen = Mutex::new(Vec::new());
        let sink = |event: StreamEvent| seen.lock().expect("lock").push(event);
        assert_eq!(
            replay.complete(&request(), &sink).await.expect("one"),
            recorded[0]
        );
        assert_eq!(
            replay.complete(&request(), &sink).await.expect("two"),
            recorded[1]
        );
        assert_eq!(
            seen.lock().expect("lock")[0],
            StreamEvent::TextDelta("one".into())
        );
        let error = replay
            .complete(&request(), &sink)
            .await
            .expect_err("exhausted");
        assert_eq!(error.kind, LlmErrorKind::Replay);
        assert!(
            error
                .message
                .contains("has 2 responses; this run asked for more")
        );
    }

    /// Answers only in one request for all candidates, as OpenAI's `n`.
    struct Choices(Vec<Response>);

    impl Provider for Choices {
        fn name(&self) -> &str {
            "choices"
        }

        fn complete<'a>(&'a self, _: &'a Request, _: EventSink<'a>) -> CompletionFuture<'a> {
            Box::pin(async {
                Err(LlmError {
                    kind: LlmErrorKind::BadRequest,
                    message: "asked one at a time".into(),
                })
            })
        }

        fn complete_n<'a>(
            &'a self,
            _: &'a Request,
            n: u32,
            _: EventSink<'a>,
        ) -> CompletionsFuture<'a> {
            Box::pin(async move { self.0.iter().take(n as usize).cloned().map(Ok).collect() })
        }
    }

    #[tokio::test]
    async fn candidates_are_recorded_from_one_request_and_replayed_in_order() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("run.jsonl");
        let sink = |_: StreamEvent| {};
        let live = vec![response("a"), response("b"), response("c")];
        // Through a box, as the CLI holds its provider.
        let inner: Box<dyn Provider> = Box::new(Choices(live.clone()));
        let recorder = Recorder::new(inner, &path).expect("recorder");
        let got: Vec<Response> = recorder
            .complete_n(&request(), 3, &sink)
            .await
            .into_iter()
            .map(|answer| answer.expect("answered"))
            .collect();
        assert_eq!(got, live);
        let replay = ReplayProvider::open(&path).expect("open");
        let again: Vec<Response> = replay
            .complete_n(&request(), 3, &sink)
            .await
            .into_iter()
            .map(|answer| answer.expect("replayed"))
            .collect();
        assert_eq!(again, live);
    }

    #[test]
    fn bad_recordings_name_the_line() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, "\n{\"nope\":1}\n").expect("write");
        let error = ReplayProvider::open(&path).expect_err("bad");
        assert!(error.message.contains("line 2"), "{}", error.message);
    }
}
