//! Kaizen's model providers: the OpenAI Chat Completions, Anthropic Messages
//! and Ollama chat wire formats, streamed, behind one [`Provider`] trait;
//! retries with backoff; a price table; and record/replay of runs.
//!
//! Choose a provider with [`select_provider`] (the CLI's `--model` and
//! `--provider` and the vendors' environment variables), or build one
//! directly from its config ([`OpenAiProvider::new`],
//! [`AnthropicProvider::new`], [`OllamaProvider::new`]).

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod anthropic;
mod client;
mod fallback;
mod http;
mod ollama;
mod openai;
mod prefix;
mod pricing;
mod replay;
mod retry;
mod select;
mod sse;
#[cfg(test)]
mod test_support;
pub mod tokens;
mod types;
mod windows;
mod wire;

pub use anthropic::{
    ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_VERSION, AnthropicConfig, AnthropicProvider,
};
pub use client::http_client;
pub use fallback::{FallbackProvider, ProviderFactory};
pub use http::{ApiKey, HttpSettings};
pub use ollama::{OLLAMA_DEFAULT_HOST, OllamaConfig, OllamaProvider, ollama_host_url};
pub use openai::{OPENAI_DEFAULT_BASE_URL, OpenAiConfig, OpenAiProvider};
pub use pricing::{Price, PriceTable};
pub use replay::{Recorder, ReplayProvider};
pub use retry::{RetryPolicy, is_retryable_status, parse_retry_after};
pub use select::{ProviderKind, SelectError, Selection, process_env, select_provider};
pub use types::*;
pub use windows::{ContextWindows, DEFAULT_WINDOW};
