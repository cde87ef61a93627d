//! The provider-neutral conversation model every wire format maps to.

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// Who said a message. The system prompt travels separately in
/// [`Request::system`]; tool results are user-side blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person, or the host on their behalf (tool results).
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image (user side, e.g. from a tool result).
    Image {
        /// IANA media type.
        media_type: String,
        /// Base64 of the image bytes.
        data_base64: String,
    },
    /// A tool call the model made.
    ToolUse {
        /// The provider's id for the call; results refer to it.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments exactly as the model sent them: JSON text that
        /// may be malformed (the tool registry reports that to the model).
        arguments: String,
    },
    /// The result of a tool call, sent back on the user side.
    ToolResult {
        /// The call this answers.
        tool_use_id: String,
        /// What the model sees.
        content: Vec<Block>,
        /// True when the call failed.
        is_error: bool,
    },
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: Vec<Block>,
}

impl Message {
    /// Its text blocks, a line apart.
    pub fn text(&self) -> String {
        texts(&self.content).collect::<Vec<_>>().join("\n")
    }
}

/// The text of each text block in `content`.
fn texts(content: &[Block]) -> impl Iterator<Item = &str> {
    content.iter().filter_map(|block| match block {
        Block::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its input object.
    pub input_schema: serde_json::Value,
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The model name as the provider knows it.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools on offer.
    pub tools: Vec<ToolDefinition>,
    /// Upper bound on output tokens.
    pub max_tokens: u32,
    /// Sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f32>,
}

/// Tokens a call used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens billed at the full rate.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Adds another call's usage.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    /// What `self` counts beyond `other`, field by field (none below 0).
    pub fn beyond(&self, other: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(other.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(other.output_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_sub(other.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_sub(other.cache_write_tokens),
        }
    }

    /// All input tokens, cached or not.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A natural end of its turn.
    EndTurn,
    /// It called tools.
    ToolUse,
    /// It hit `max_tokens`.
    MaxTokens,
    /// Anything else the provider said.
    Other(String),
}

/// What one model call produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Text and tool-use blocks, in the order the model produced them.
    pub content: Vec<Block>,
    /// Tokens used.
    pub usage: Usage,
    /// Why it stopped (informational: the loop decides on tool calls).
    pub stop_reason: StopReason,
    /// The model that answered, as the provider named it.
    pub model: String,
}

impl Response {
    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.content.iter().filter_map(|block| match block {
            Block::ToolUse {
                id,
                name,
                arguments,
            } => Some((id.as_str(), name.as_str(), arguments.as_str())),
            _ => None,
        })
    }

    /// All text blocks joined.
    pub fn text(&self) -> String {
        texts(&self.content).collect()
    }
}

/// What a streaming call reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More assistant text.
    TextDelta(String),
    /// The model started a tool call.
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// The provider is being retried after `error`; `attempt` is 1-based.
    Retrying {
        /// The next attempt's number.
        attempt: u32,
        /// What failed.
        error: String,
    },
    /// Model `from` kept failing; the request goes to `to`, the next of
    /// its fallback chain.
    FallingBack {
        /// The model that failed.
        from: String,
        /// The model tried next.
        to: String,
        /// How `from` failed.
        error: String,
    },
}

/// Receives [`StreamEvent`]s during a call.
pub type EventSink<'a> = &'a (dyn Fn(StreamEvent) + Send + Sync);

/// Why a model call failed, after retries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LlmError {
    /// The category.
    pub kind: LlmErrorKind,
    /// What happened and what to do about it (e.g. which variable to check).
    pub message: String,
}

/// Categories of [`LlmError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmErrorKind {
    /// 401/403: the key is missing or wrong.
    Auth,
    /// 429 after every retry.
    RateLimited,
    /// 5xx after every retry.
    Server,
    /// Connection refused, reset, DNS, TLS.
    Network,
    /// No response, or the stream went idle, within the timeout.
    Timeout,
    /// 400/404/422: the request was refused (unknown model, bad input).
    BadRequest,
    /// The response did not follow the wire format (truncated stream, bad JSON).
    InvalidResponse,
    /// A replay file ran out or did not match.
    Replay,
}

/// The future a provider returns.
pub type CompletionFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Response, LlmError>> + Send + 'a>>;

/// The future of several completions of one request: each one's outcome,
/// in order.
pub type CompletionsFuture<'a> =
    Pin<Box<dyn Future<Output = Vec<Result<Response, LlmError>>> + Send + 'a>>;

/// `n` completions of `request` as `n` calls at once, in order.
pub(crate) async fn separate_calls<P: Provider + ?Sized>(
    provider: &P,
    request: &Request,
    n: u32,
    events: EventSink<'_>,
) -> Vec<Result<Response, LlmError>> {
    futures::future::join_all((0..n.max(1)).map(|_| provider.complete(request, events))).await
}

/// A model API.
pub trait Provider: Send + Sync {
    /// `openai`, `anthropic`, `ollama`, `replay`, ...
    fn name(&self) -> &str;

    /// Runs one call, streaming events to `events` as they arrive.
    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a>;

    /// `n` completions of the same request (candidates), in order. By
    /// default `n` calls at once; a provider that can ask for several
    /// choices in one call (OpenAI's `n`) does that instead.
    fn complete_n<'a>(
        &'a self,
        request: &'a Request,
        n: u32,
        events: EventSink<'a>,
    ) -> CompletionsFuture<'a> {
        Box::pin(separate_calls(self, request, n, events))
    }
}
