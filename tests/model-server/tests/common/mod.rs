//! Helpers shared by the integration tests: a plain reqwest client and
//! parsers for SSE and NDJSON bodies.

#![allow(dead_code)]

use serde_json::Value;

/// A client with a generous overall timeout, so a broken test fails rather
/// than hangs.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .expect("client")
}

/// POSTs `body` as JSON to `url`.
pub async fn post(url: &str, body: &Value) -> reqwest::Response {
    client().post(url).json(body).send().await.expect("send")
}

/// Reads the whole body chunk by chunk: the bytes received, and the error
/// that ended the body early, if any.
pub async fn read_body(mut resp: reqwest::Response) -> (Vec<u8>, Option<reqwest::Error>) {
    let mut out = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => out.extend_from_slice(&chunk),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
}

impl Event {
    /// The data parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {}", self.data))
    }
}

/// Parses a complete SSE body.
pub fn sse(body: &[u8]) -> Vec<Event> {
    let text = std::str::from_utf8(body).expect("utf-8");
    assert!(text.ends_with("\n\n"), "SSE body ends with a blank line");
    text.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    event = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push(v);
                } else {
                    panic!("unexpected SSE line: {line:?}");
                }
            }
            Event {
                event,
                data: data.join("\n"),
            }
        })
        .collect()
}

/// Parses a complete NDJSON body.
pub fn ndjson(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).expect("utf-8");
    assert!(text.ends_with('\n'), "NDJSON body ends with a newline");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The content type of a response.
pub fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}
