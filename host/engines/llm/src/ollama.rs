//! Ollama's native `/api/chat`, streamed as NDJSON.

mod request;
mod stream;

use crate::http::{Call, HttpSettings, Transport};
use crate::types::{CompletionFuture, EventSink, LlmError, Provider, Request};
use crate::wire;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// `OLLAMA_HOST`'s default: the server root.
pub const OLLAMA_DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// How to reach an Ollama server.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaConfig {
    /// The server root, e.g. `http://127.0.0.1:11434`.
    pub host: String,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl OllamaConfig {
    /// A config for an `OLLAMA_HOST` value (`None`: the local default),
    /// read as Ollama reads it: see [`ollama_host_url`].
    pub fn new(host: Option<&str>) -> Self {
        OllamaConfig {
            host: host.map_or_else(|| OLLAMA_DEFAULT_HOST.to_string(), ollama_host_url),
            http: HttpSettings::default(),
        }
    }
}

/// Normalizes an `OLLAMA_HOST` value the way Ollama's own client does: the
/// scheme defaults to `http`, the port to 11434 without a scheme (80/443
/// with an explicit `http://`/`https://`), the host to 127.0.0.1; so
/// `localhost:11434`, `0.0.0.0` and `:8080` all work.
pub fn ollama_host_url(value: &str) -> String {
    let value = value.trim().trim_end_matches('/');
    if value.is_empty() {
        return OLLAMA_DEFAULT_HOST.to_string();
    }
    let (scheme, rest, default_port) = match value.split_once("://") {
        Some((scheme, rest)) => {
            let port = if scheme.eq_ignore_ascii_case("https") {
                "443"
            } else {
                "80"
            };
            (scheme, rest, port)
        }
        None => ("http", value, "11434"),
    };
    let (authority, path) = match rest.split_once('/') {
        Some((authority, path)) => (authority, format!("/{path}")),
        None => (rest, String::new()),
    };
    // A port follows the last colon, unless that colon is inside an IPv6
    // literal's brackets.
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') && port.parse::<u16>().is_ok() => (host, port),
        _ => (authority, default_port),
    };
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    format!("{scheme}://{host}:{port}{path}")
}

/// The Ollama provider.
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    url: String,
    transport: Transport,
    /// Ollama's tool calls have no ids; `call_<n>` from this counter keeps
    /// them unique for the provider's lifetime.
    next_call: Arc<AtomicU64>,
}

impl OllamaProvider {
    /// Builds the provider; fails only when the HTTP client cannot be set up.
    pub fn new(config: OllamaConfig) -> Result<Self, LlmError> {
        Ok(OllamaProvider {
            url: format!("{}/api/chat", config.host.trim_end_matches('/')),
            transport: Transport::new(config.http)?,
            next_call: Arc::new(AtomicU64::new(0)),
        })
    }
}

impl Provider for OllamaProvider {
    fn name(&self) -> &str {
        "ollama"
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            let call = Call {
                provider: "Ollama",
                url: self.url.clone(),
                headers,
                body: wire::to_bytes(&request::request_body(request))?,
                // Ollama has no key; a 401 comes from a proxy in front of it.
                key_var: "OLLAMA_HOST (and the proxy in front of it)",
                base_var: "OLLAMA_HOST",
            };
            let fallback_model = request.model.clone();
            self.transport
                .stream(
                    &call,
                    || stream::Decoder::new(fallback_model.clone(), self.next_call.clone()),
                    events,
                )
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_values_as_ollama_reads_them() {
        assert_eq!(ollama_host_url("localhost:11434"), "http://localhost:11434");
        assert_eq!(ollama_host_url("0.0.0.0"), "http://0.0.0.0:11434");
        assert_eq!(ollama_host_url(":8080"), "http://127.0.0.1:8080");
        assert_eq!(
            ollama_host_url("http://example.com/"),
            "http://example.com:80"
        );
        assert_eq!(
            ollama_host_url("https://example.com"),
            "https://example.com:443"
        );
        assert_eq!(
            ollama_host_url("http://127.0.0.1:5000/ollama"),
            "http://127.0.0.1:5000/ollama"
        );
        assert_eq!(ollama_host_url("[::1]:1234"), "http://[::1]:1234");
        assert_eq!(ollama_host_url("[::1]"), "http://[::1]:11434");
        assert_eq!(ollama_host_url(""), OLLAMA_DEFAULT_HOST);
    }
}
