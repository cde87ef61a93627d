//! OpenAI Chat Completions, which also serves every OpenAI-compatible server
//! (vLLM, llama.cpp, LM Studio, OpenRouter, ...) through the base URL.

mod request;
mod stream;

use crate::http::{ApiKey, Call, HttpSettings, Transport};
use crate::types::{
    CompletionFuture, CompletionsFuture, EventSink, LlmError, LlmErrorKind, Provider, Request,
};
use crate::wire;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use std::sync::{Arc, Mutex};

/// `OPENAI_BASE_URL`'s default. It includes `/v1`, as in OpenAI's SDKs.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How to reach an OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// Sent as `Authorization: Bearer`; optional because local
    /// OpenAI-compatible servers usually take none.
    pub api_key: Option<ApiKey>,
    /// The API root including `/v1`.
    pub base_url: String,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl OpenAiConfig {
    /// A config for `base_url` (`None`: api.openai.com) with default HTTP
    /// settings.
    pub fn new(api_key: Option<ApiKey>, base_url: Option<String>) -> Self {
        OpenAiConfig {
            api_key,
            base_url: base_url.unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_string()),
            http: HttpSettings::default(),
        }
    }
}

/// The OpenAI Chat Completions provider.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    url: String,
    headers: HeaderMap,
    transport: Transport,
}

impl OpenAiProvider {
    /// Builds the provider; fails only when the key is not a valid header
    /// value or the HTTP client cannot be set up.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &config.api_key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    LlmError {
                        kind: LlmErrorKind::Auth,
                        message:
                            "OPENAI_API_KEY contains characters that cannot be sent in a header"
                                .into(),
                    }
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(OpenAiProvider {
            url: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
            headers,
            transport: Transport::new(config.http)?,
        })
    }
}

impl OpenAiProvider {
    fn call(&self, body: Vec<u8>) -> Call {
        Call {
            provider: "OpenAI",
            url: self.url.clone(),
            headers: self.headers.clone(),
            body,
            key_var: "OPENAI_API_KEY",
            base_var: "OPENAI_BASE_URL",
        }
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    /// Several candidates in one call (`n`); a compatible server that
    /// refuses `n` gets separate calls instead.
    fn complete_n<'a>(
        &'a self,
        request: &'a Request,
        n: u32,
        events: EventSink<'a>,
    ) -> CompletionsFuture<'a> {
        Box::pin(async move {
            if n <= 1 {
                return vec![self.complete(request, events).await];
            }
            let body = match wire::to_bytes(&request::request_body_n(request, Some(n))) {
                Ok(body) => body,
                Err(err) => return vec![Err(err)],
            };
            let call = self.call(body);
            let rest = Arc::new(Mutex::new(Vec::new()));
            let model = request.model.clone();
            let first = self
                .transport
                .stream(
                    &call,
                    || stream::Choices::new(model.clone(), n, rest.clone()),
                    events,
                )
                .await;
            match first {
                Ok(first) => {
                    let mut all = vec![Ok(first)];
                    let more = std::mem::take(&mut *rest.lock().unwrap_or_else(|e| e.into_inner()));
                    all.extend(more.into_iter().map(Ok));
                    all
                }
                Err(err) if err.kind == LlmErrorKind::BadRequest => {
                    crate::types::separate_calls(self, request, n, events).await
                }
                Err(err) => vec![Err(err)],
            }
        })
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let call = self.call(wire::to_bytes(&request::request_body(request))?);
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
    fn url_joins_base() {
        let provider = OpenAiProvider::new(OpenAiConfig::new(
            Some(ApiKey::new("k")),
            Some("http://127.0.0.1:1/v1/".into()),
        ))
        .expect("provider");
        assert_eq!(provider.url, "http://127.0.0.1:1/v1/chat/completions");
        assert!(!format!("{provider:?}").contains("Bearer k"));
    }
}
