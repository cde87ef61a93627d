//! Fixtures the providers' unit tests share: decoding a streamed body chunk
//! by chunk, and a request body as the server parses it.

use crate::http::StreamDecoder;
use crate::retry::AttemptError;
use crate::types::{Response, StreamEvent};
use crate::wire::to_bytes;
use serde::Serialize;
use serde_json::Value;
use std::sync::Mutex;

/// Feeds `body` to `decoder` in chunks of `chunk_size` bytes and finishes it:
/// the response (or the first error) and the events emitted on the way.
/// Chunk sizes matter because a decoder must cope with any split of its
/// input, down to one byte at a time.
pub(crate) fn decode_stream(
    mut decoder: impl StreamDecoder,
    body: &str,
    chunk_size: usize,
) -> (Result<Response, AttemptError>, Vec<StreamEvent>) {
    let seen = Mutex::new(Vec::new());
    let sink = |event: StreamEvent| seen.lock().expect("lock").push(event);
    let mut result = Ok(());
    for chunk in body.as_bytes().chunks(chunk_size) {
        result = result.and_then(|_| decoder.feed(chunk, &sink));
    }
    let response = result.and_then(|_| decoder.finish(&sink));
    (response, seen.into_inner().expect("lock"))
}

/// A request body as the server will parse it.
pub(crate) fn parsed(body: &impl Serialize) -> Value {
    let bytes = to_bytes(body).expect("encodes");
    serde_json::from_slice(&bytes).expect("valid JSON")
}
