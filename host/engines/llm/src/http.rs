//! The HTTP plumbing every provider shares: one streamed POST per attempt,
//! status and transport failures classified for [`crate::retry`], and the
//! first-byte and idle timeouts.

use crate::retry::{
    AttemptError, RetryPolicy, is_retryable_status, retry_after_from, with_retries,
};
use crate::types::{EventSink, LlmError, LlmErrorKind, Response};
use reqwest::header::HeaderMap;
use std::fmt;
use std::time::Duration;
use tokio::time::timeout;

/// Timeouts and retries of a provider's HTTP calls.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// How long to wait for the response headers (the model may think for a
    /// while before its first token).
    pub first_byte_timeout: Duration,
    /// How long the stream may stay silent between two chunks.
    pub idle_timeout: Duration,
    /// When and how to retry.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            first_byte_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
        }
    }
}

/// A provider API key. It is only ever written into a request header: its
/// `Debug` is redacted, it has no `Display` and no `Serialize`, so it cannot
/// end up in a log, an error message, a recording or a checkpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the request header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Turns a provider's streamed body into a [`Response`].
pub(crate) trait StreamDecoder {
    /// Takes the next chunk, emitting events as they complete.
    fn feed(&mut self, chunk: &[u8], events: EventSink<'_>) -> Result<(), AttemptError>;

    /// The body ended: the response, or an error when it ended too early.
    fn finish(&mut self, events: EventSink<'_>) -> Result<Response, AttemptError>;
}

/// One provider call, ready to send as many times as retries need.
pub(crate) struct Call {
    /// The provider as users know it ("OpenAI").
    pub provider: &'static str,
    /// The endpoint.
    pub url: String,
    /// Headers, the key among them (marked sensitive).
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: Vec<u8>,
    /// The variable holding the key, named when the key is refused.
    pub key_var: &'static str,
    /// The variable holding the base URL, named when the endpoint is wrong.
    pub base_var: &'static str,
}

/// A reqwest client with the settings applied to every call.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    settings: HttpSettings,
}

impl Transport {
    /// Builds the client (which loads the TLS roots).
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        let setup_failed = |message: String| LlmError {
            kind: LlmErrorKind::Network,
            message: format!("could not set up the HTTP client: {message}"),
        };
        let client = crate::client::http_client()
            .map_err(setup_failed)?
            .user_agent(concat!("kaizen/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| setup_failed(chain(&error)))?;
        Ok(Transport { client, settings })
    }

    /// Sends `call` with retries, decoding each attempt's stream with a
    /// fresh decoder from `decoder`.
    pub async fn stream<D: StreamDecoder>(
        &self,
        call: &Call,
        decoder: impl Fn() -> D,
        events: EventSink<'_>,
    ) -> Result<Response, LlmError> {
        with_retries(&self.settings.retry, events, |_| {
            self.attempt(call, decoder(), events)
        })
        .await
    }

    async fn attempt<D: StreamDecoder>(
        &self,
        call: &Call,
        mut decoder: D,
        events: EventSink<'_>,
    ) -> Result<Response, AttemptError> {
        let where_ = display_url(&call.url);
        let request = self
            .client
            .post(&call.url)
            .headers(call.headers.clone())
            .body(call.body.clone());
        let first_byte = self.settings.first_byte_timeout;
        let mut response = match timeout(first_byte, request.send()).await {
            Err(_) => {
                return Err(AttemptError::transient(
                    LlmErrorKind::Timeout,
                    format!(
                        "{} did not answer within {} at {where_}",
                        call.provider,
                        seconds(first_byte)
                    ),
                ));
            }
            Ok(Err(error)) => {
                return Err(AttemptError::transient(
                    LlmErrorKind::Network,
                    format!(
                        "could not reach {} at {where_}: {}",
                        call.provider,
                        chain(&error)
                    ),
                ));
            }
            Ok(Ok(response)) => response,
        };
        if !response.status().is_success() {
            return Err(self.status_error(call, response).await);
        }
        let idle = self.settings.idle_timeout;
        loop {
            match timeout(idle, response.chunk()).await {
                Err(_) => {
                    return Err(AttemptError::transient(
                        LlmErrorKind::Timeout,
                        format!(
                            "{}'s stream went silent for {} at {where_}",
                            call.provider,
                            seconds(idle)
                        ),
                    ));
                }
                Ok(Err(error)) => {
                    return Err(AttemptError::transient(
                        LlmErrorKind::InvalidResponse,
                        format!("{}'s stream broke off: {}", call.provider, chain(&error)),
                    ));
                }
                Ok(Ok(None)) => return decoder.finish(events),
                Ok(Ok(Some(chunk))) => decoder.feed(&chunk, events)?,
            }
        }
    }

    async fn status_error(&self, call: &Call, response: reqwest::Response) -> AttemptError {
        let status = response.status().as_u16();
        let retry_after = retry_after_from(response.headers());
        let body = match timeout(self.settings.idle_timeout, response.bytes()).await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        };
        let detail = error_message(&body).unwrap_or_else(|| "no error message".to_string());
        let provider = call.provider;
        let (kind, message) = match status {
            401 | 403 => (
                LlmErrorKind::Auth,
                format!(
                    "{provider} refused the credentials (HTTP {status}: {detail}); check {}",
                    call.key_var
                ),
            ),
            429 => (
                LlmErrorKind::RateLimited,
                format!("{provider} rate limit (HTTP 429): {detail}"),
            ),
            404 => (
                LlmErrorKind::BadRequest,
                format!(
                    "{provider} answered 404 at {}: {detail} (check the model name and {})",
                    display_url(&call.url),
                    call.base_var
                ),
            ),
            500.. => (
                LlmErrorKind::Server,
                format!("{provider} server error (HTTP {status}): {detail}"),
            ),
            _ => (
                LlmErrorKind::BadRequest,
                format!("{provider} rejected the request (HTTP {status}): {detail}"),
            ),
        };
        AttemptError {
            kind,
            message,
            retryable: is_retryable_status(status),
            retry_after,
        }
    }
}

/// The provider's own words from an error body: `error.message` (OpenAI,
/// Anthropic), `error` as a string (Ollama), `message`, or the raw text.
pub(crate) fn error_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let found = json
            .pointer("/error/message")
            .or_else(|| json.get("error").filter(|e| e.is_string()))
            .or_else(|| json.get("message"))
            .and_then(|m| m.as_str());
        if let Some(message) = found {
            return Some(message.to_string());
        }
    }
    Some(truncate(body, 500))
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A URL for messages: without user info or query, which could hold secrets.
pub(crate) fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            // Both setters only fail for URLs that cannot have user info.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// An error with its causes ("error sending request: connection refused"),
/// with reqwest's URL left out (`display_url` gives a cleaned one).
fn chain(error: &reqwest::Error) -> String {
    use std::error::Error;
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(&format!(" for url ({url})"), "");
    }
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert!(!format!("{:?}", Some(key)).contains("secret"));
    }

    #[test]
    fn error_messages_from_each_wire_format() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key","type":"x"}}"#).as_deref(),
            Some("bad key")
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            )
            .as_deref(),
            Some("Overloaded")
        );
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#).as_deref(),
            Some("model 'x' not found")
        );
        assert_eq!(error_message("oops").as_deref(), Some("oops"));
        assert_eq!(error_message("  "), None);
        assert_eq!(truncate("abcdef", 3), "abc…");
    }

    #[test]
    fn urls_lose_credentials_in_messages() {
        assert_eq!(
            display_url("https://user:pw@example.com/v1/chat?key=abc"),
            "https://example.com/v1/chat"
        );
    }
}
