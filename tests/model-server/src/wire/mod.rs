//! The five wire formats: routing, the streaming flag, where each keeps
//! its model, tools and conversation, and rendering a resolved reply or an
//! error as each vendor would.

mod anthropic;
mod gemini;
mod ollama;
mod openai;
mod responses;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

/// Which vendor's API a request spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Wire {
    /// OpenAI Chat Completions, `POST /v1/chat/completions`.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages, `POST /v1/messages`.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Ollama chat, `POST /api/chat`.
    #[serde(rename = "ollama")]
    Ollama,
    /// OpenAI Responses, `POST /v1/responses` (as Codex CLI speaks it).
    #[serde(rename = "responses")]
    Responses,
    /// Gemini, `POST /v1beta/models/{model}:generateContent` and
    /// `:streamGenerateContent` (as Gemini CLI speaks it).
    #[serde(rename = "gemini")]
    Gemini,
}

/// Where Gemini's endpoints live: `/v1beta/models/{model}:{method}`.
const GEMINI_MODELS: &str = "/v1beta/models/";

/// The model and method of a Gemini path, if it is one.
fn gemini_path(path: &str) -> Option<(&str, &str)> {
    let (model, method) = path.strip_prefix(GEMINI_MODELS)?.rsplit_once(':')?;
    (!model.is_empty() && !model.contains('/')).then_some((model, method))
}

/// Whether a Responses `input` item is the model's own output (a message
/// it wrote, a call it made, its reasoning) rather than the user's or a
/// tool's.
fn model_item(item: &Value) -> bool {
    item["role"] == "assistant"
        || matches!(
            item["type"].as_str(),
            Some("function_call" | "custom_tool_call" | "local_shell_call" | "reasoning")
        )
}

/// A tool call with its id settled.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A reply ready to render: ids, model and timestamps settled.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// 1-based number of the request, used in response ids.
    pub seq: u64,
    pub text: Option<String>,
    pub calls: Vec<Call>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model: String,
    /// Unix time, nanoseconds.
    pub created_nanos: u128,
    /// OpenAI: the request asked for `stream_options.include_usage`.
    pub include_usage: bool,
}

impl Resolved {
    /// Unix time, seconds.
    pub fn created(&self) -> u64 {
        (self.created_nanos / 1_000_000_000) as u64
    }
}

/// Unix time now, nanoseconds.
pub(crate) fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

impl Wire {
    /// The wire format served at `path` (without the query), if any.
    pub fn from_path(path: &str) -> Option<Wire> {
        match path {
            "/v1/chat/completions" => Some(Wire::OpenAi),
            "/v1/messages" => Some(Wire::Anthropic),
            "/api/chat" => Some(Wire::Ollama),
            "/v1/responses" => Some(Wire::Responses),
            _ => match gemini_path(path) {
                Some((_, "generateContent" | "streamGenerateContent")) => Some(Wire::Gemini),
                _ => None,
            },
        }
    }

    /// Whether a request to `path` with this body asks for a streamed
    /// answer. OpenAI, Anthropic and Responses stream only with
    /// `"stream": true`; Ollama streams unless `"stream": false`; Gemini
    /// streams at `:streamGenerateContent`, whatever the body says.
    pub fn wants_stream(self, path: &str, body: &Value) -> bool {
        let stream = body.get("stream").and_then(Value::as_bool);
        match self {
            Wire::OpenAi | Wire::Anthropic | Wire::Responses => stream == Some(true),
            Wire::Ollama => stream != Some(false),
            Wire::Gemini => gemini_path(path).is_some_and(|(_, m)| m == "streamGenerateContent"),
        }
    }

    /// The model a request names: Gemini's is in the path, every other
    /// wire's in the body's `model`.
    pub(crate) fn model<'a>(self, path: &'a str, body: &'a Value) -> Option<&'a str> {
        match self {
            Wire::Gemini => gemini_path(path).map(|(model, _)| model),
            _ => body.get("model").and_then(Value::as_str),
        }
    }

    /// The conversation a request carries: `messages`, Responses' `input`
    /// (a string or a list of items) or Gemini's `contents`.
    pub(crate) fn conversation(self, body: &Value) -> &Value {
        match self {
            Wire::Responses => &body["input"],
            Wire::Gemini => &body["contents"],
            _ => &body["messages"],
        }
    }

    /// Whether a request offers the model any tools: a non-empty `tools`
    /// (Chat Completions, Anthropic, Ollama, Responses, where a tool of any
    /// type counts), or, for Gemini, any entry of
    /// `tools[].functionDeclarations` (a search-only tool offers nothing
    /// the client would run).
    pub fn offers_tools(self, body: &Value) -> bool {
        let Some(tools) = body.get("tools").and_then(Value::as_array) else {
            return false;
        };
        match self {
            Wire::Gemini => tools.iter().any(|tool| {
                tool["functionDeclarations"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
            }),
            _ => !tools.is_empty(),
        }
    }

    /// How many model turns a request's conversation holds: its position in
    /// the conversation, comparable across wires. Messages with role
    /// `assistant`; Gemini contents with role `model`; for Responses, runs
    /// of consecutive model items (see [`model_item`]), since one reply
    /// there becomes several items (a message, each call, reasoning).
    pub(crate) fn model_turns(self, body: &Value) -> usize {
        let Some(entries) = self.conversation(body).as_array() else {
            return 0;
        };
        match self {
            Wire::Responses => entries
                .iter()
                .enumerate()
                .filter(|(i, item)| model_item(item) && (*i == 0 || !model_item(&entries[i - 1])))
                .count(),
            Wire::Gemini => entries.iter().filter(|c| c["role"] == "model").count(),
            _ => entries.iter().filter(|m| m["role"] == "assistant").count(),
        }
    }

    /// The non-streaming response body.
    pub(crate) fn body(self, r: &Resolved) -> Value {
        match self {
            Wire::OpenAi => openai::body(r),
            Wire::Anthropic => anthropic::body(r),
            Wire::Ollama => ollama::body(r),
            Wire::Responses => responses::body(r),
            Wire::Gemini => gemini::body(r),
        }
    }

    /// The streamed response: one element per SSE event or NDJSON line.
    pub(crate) fn events(self, r: &Resolved) -> Vec<Bytes> {
        match self {
            Wire::OpenAi => openai::events(r),
            Wire::Anthropic => anthropic::events(r),
            Wire::Ollama => ollama::events(r),
            Wire::Responses => responses::events(r),
            Wire::Gemini => gemini::events(r),
        }
    }

    /// The streamed response of a request for several choices (OpenAI's
    /// `n`; the other wires have no such request, so they get the first).
    pub(crate) fn choices_events(self, rs: &[Resolved]) -> Vec<Bytes> {
        match self {
            Wire::OpenAi => openai::choices_events(rs),
            _ => rs.first().map(|r| self.events(r)).unwrap_or_default(),
        }
    }

    /// The error body for `status`.
    pub(crate) fn error(self, status: u16, message: &str) -> Value {
        match self {
            Wire::OpenAi | Wire::Responses => openai::error(status, message),
            Wire::Anthropic => anthropic::error(status, message),
            Wire::Ollama => ollama::error(message),
            Wire::Gemini => gemini::error(status, message),
        }
    }

    /// The content type of a streamed response.
    pub(crate) fn stream_content_type(self) -> &'static str {
        match self {
            Wire::OpenAi | Wire::Anthropic | Wire::Responses | Wire::Gemini => {
                "text/event-stream; charset=utf-8"
            }
            Wire::Ollama => "application/x-ndjson",
        }
    }

    /// The vendor's request-id header, for realism.
    pub(crate) fn request_id_header(self) -> Option<&'static str> {
        match self {
            Wire::OpenAi | Wire::Responses => Some("x-request-id"),
            Wire::Anthropic => Some("request-id"),
            Wire::Ollama | Wire::Gemini => None,
        }
    }
}

/// Splits `s` at char boundaries into at most `parts` non-empty pieces of
/// nearly equal length (fewer when `s` has fewer chars; none when empty).
pub(crate) fn split(s: &str, parts: usize) -> Vec<&str> {
    let chars = s.chars().count();
    let parts = parts.min(chars);
    if parts == 0 {
        return Vec::new();
    }
    let bounds: Vec<usize> = s
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect();
    (0..parts)
        .map(|k| &s[bounds[k * chars / parts]..bounds[(k + 1) * chars / parts]])
        .collect()
}

/// Text pieces for streaming: at least three, more for long text (about
/// 24 chars each).
pub(crate) fn text_pieces(s: &str) -> Vec<&str> {
    split(s, s.chars().count().div_ceil(24).clamp(3, 64))
}

/// Argument fragments for streaming: up to three.
pub(crate) fn argument_fragments(s: &str) -> Vec<&str> {
    split(s, 3)
}

/// The arguments as a JSON value if they parse, else as a JSON string of
/// the raw text.
pub(crate) fn arguments_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// Formats Unix nanoseconds as RFC 3339 UTC, as Ollama's `created_at`.
pub(crate) fn rfc3339(nanos: u128) -> String {
    let secs = (nanos / 1_000_000_000) as i64;
    let frac = (nanos % 1_000_000_000) as u32;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{frac:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One SSE event with an `event:` line.
pub(crate) fn sse_named(event: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}

/// One SSE event with only a `data:` line.
pub(crate) fn sse_data(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_everything_at_char_boundaries() {
        assert_eq!(split("", 3), Vec::<&str>::new());
        assert_eq!(split("a", 3), vec!["a"]);
        assert_eq!(split("ab", 3), vec!["a", "b"]);
        assert_eq!(split("abcdefg", 3), vec!["ab", "cd", "efg"]);
        let s = "héllo wörld ✓";
        assert_eq!(split(s, 3).concat(), s);
        assert_eq!(text_pieces(&"x".repeat(100)).len(), 5);
    }

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            rfc3339(1_748_386_497_641_643_000),
            "2025-05-27T22:54:57.641643000Z"
        );
        assert_eq!(
            rfc3339(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000000000Z"
        );
    }
}
