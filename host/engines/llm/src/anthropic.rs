//! Anthropic Messages, with prompt caching.

mod request;
mod stream;

use crate::http::{ApiKey, Call, HttpSettings, Transport};
use crate::types::{CompletionFuture, EventSink, LlmError, LlmErrorKind, Provider, Request};
use crate::wire;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

/// `ANTHROPIC_BASE_URL`'s default. It does not include `/v1`, as in
/// Anthropic's SDKs.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this wire format follows.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How to reach Anthropic.
#[derive(Debug, Clone, PartialEq)]
pub struct AnthropicConfig {
    /// Sent as `x-api-key`; optional only for a proxy or compatible server
    /// that takes none.
    pub api_key: Option<ApiKey>,
    /// The API root without `/v1`.
    pub base_url: String,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl AnthropicConfig {
    /// A config for `base_url` (`None`: api.anthropic.com) with default HTTP
    /// settings.
    pub fn new(api_key: Option<ApiKey>, base_url: Option<String>) -> Self {
        AnthropicConfig {
            api_key,
            base_url: base_url.unwrap_or_else(|| ANTHROPIC_DEFAULT_BASE_URL.to_string()),
            http: HttpSettings::default(),
        }
    }
}

/// The Anthropic Messages provider.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    url: String,
    headers: HeaderMap,
    transport: Transport,
}

impl AnthropicProvider {
    /// Builds the provider; fails only when the key is not a valid header
    /// value or the HTTP client cannot be set up.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = &config.api_key {
            let mut value = HeaderValue::from_str(key.expose()).map_err(|_| LlmError {
                kind: LlmErrorKind::Auth,
                message: "ANTHROPIC_API_KEY contains characters that cannot be sent in a header"
                    .into(),
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(AnthropicProvider {
            url: format!("{}/v1/messages", config.base_url.trim_end_matches('/')),
            headers,
            transport: Transport::new(config.http)?,
        })
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let call = Call {
                provider: "Anthropic",
                url: self.url.clone(),
                headers: self.headers.clone(),
                body: wire::to_bytes(&request::request_body(request))?,
                key_var: "ANTHROPIC_API_KEY",
                base_var: "ANTHROPIC_BASE_URL",
            };
            let fallback_model = request.model.clone();
            self.transport
                .stream(
                    &call,
                    || stream::Decoder::new(fallback_model.clone()),
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
    fn url_and_redacted_debug() {
        let provider = AnthropicProvider::new(AnthropicConfig::new(
            Some(ApiKey::new("sk-ant-secret")),
            Some("http://127.0.0.1:9/".into()),
        ))
        .expect("provider");
        assert_eq!(provider.url, "http://127.0.0.1:9/v1/messages");
        assert!(!format!("{provider:?}").contains("secret"));
    }
}
