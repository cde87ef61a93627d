//! What the server answers: a script of turns, one consumed per request.
//!
//! Scripts are plain data (serde), so the binary can read them from a JSON
//! file:
//!
//! ```json
//! {"turns": [
//!   {"reply": {"tool_calls": [{"name": "read", "arguments": "{\"path\":\"a\"}"}]}},
//!   {"fault": {"status": {"code": 429, "retry_after": 1}}},
//!   {"fault": "hang"},
//!   {"reply": {"text": "done", "input_tokens": 10, "output_tokens": 2}}
//! ]}
//! ```

use serde::{Deserialize, Serialize};

/// An ordered list of turns. Every request the server receives on a model
/// endpoint, whatever its wire format, consumes the next turn.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Script {
    /// The turns, first answered first.
    pub turns: Vec<Turn>,
    /// The answer to every request that offers no tools (a plugin's or a
    /// planner's own completion), which then leaves the turns alone; none
    /// means such requests take turns like any other.
    #[serde(default)]
    pub aside: Option<Reply>,
}

/// One scripted answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Turn {
    /// A well-formed model reply.
    Reply(Reply),
    /// A failure of the kind a real provider or network produces.
    Fault(Fault),
}

/// A model reply: text and/or tool calls, with the usage to report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    /// Assistant text, if any. Streamed in several pieces.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls, in order, after the text.
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// Reported input (prompt) tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Reported output (completion) tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// The model name to report; by default the request's `model` is echoed.
    #[serde(default)]
    pub model: Option<String>,
}

/// A tool call the scripted model makes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScriptedCall {
    /// The call id; by default `call_<n>`, where `n` counts the tool calls
    /// the server has emitted so far, starting at 1 (unique per server).
    #[serde(default)]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// Raw JSON text of the arguments, sent as-is: may be deliberately
    /// malformed. Where a wire format carries arguments as a JSON value
    /// rather than text (Anthropic non-streaming `input`, Ollama
    /// `arguments`, Gemini `args`), malformed text is sent as a JSON string
    /// instead.
    pub arguments: String,
}

/// A scripted failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Answer with this HTTP status and a wire-format-appropriate error
    /// body; with `retry_after`, a `retry-after` header (seconds).
    Status {
        /// The HTTP status code, e.g. 429, 500, 529.
        code: u16,
        /// Seconds for the `retry-after` header, if any.
        #[serde(default)]
        retry_after: Option<u64>,
        /// The error message; a generic one by default.
        #[serde(default)]
        message: Option<String>,
    },
    /// Start answering `reply` but close the connection half-way. Streaming:
    /// after about half of the events, in the middle of the next one.
    /// Non-streaming: half of the JSON body under a `content-length` of the
    /// whole.
    Truncated {
        /// The reply whose answer is cut short.
        reply: Reply,
    },
    /// Wait `delay_ms` before the first byte (the status line), then answer
    /// `reply`.
    Slow {
        /// Milliseconds to wait before answering.
        delay_ms: u64,
        /// The reply to send after the delay.
        reply: Reply,
    },
    /// Accept the request and never answer (until the server is dropped).
    Hang,
}

impl Script {
    /// An empty script (every request is answered "script exhausted").
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a reply turn.
    pub fn reply(mut self, r: Reply) -> Self {
        self.turns.push(Turn::Reply(r));
        self
    }

    /// Appends a fault turn.
    pub fn fault(mut self, f: Fault) -> Self {
        self.turns.push(Turn::Fault(f));
        self
    }

    /// Appends any turn.
    pub fn turn(mut self, t: Turn) -> Self {
        self.turns.push(t);
        self
    }
}

impl Reply {
    /// A text-only reply.
    pub fn text(t: impl Into<String>) -> Self {
        Self {
            text: Some(t.into()),
            ..Self::default()
        }
    }

    /// A reply making one tool call with these raw JSON arguments.
    pub fn tool(name: &str, arguments: &str) -> Self {
        Self::default().with_tool(name, arguments)
    }

    /// Adds a tool call (default id) with these raw JSON arguments.
    pub fn with_tool(mut self, name: &str, arguments: &str) -> Self {
        self.tool_calls.push(ScriptedCall {
            id: None,
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        });
        self
    }

    /// Adds a tool call with an explicit id.
    pub fn with_tool_id(mut self, id: &str, name: &str, arguments: &str) -> Self {
        self.tool_calls.push(ScriptedCall {
            id: Some(id.to_owned()),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        });
        self
    }

    /// Sets the text.
    pub fn with_text(mut self, t: impl Into<String>) -> Self {
        self.text = Some(t.into());
        self
    }

    /// Sets the reported usage.
    pub fn with_usage(mut self, input: u64, output: u64) -> Self {
        self.input_tokens = input;
        self.output_tokens = output;
        self
    }

    /// Sets the reported model name instead of echoing the request's.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
}

impl Fault {
    /// `Status` with just a code.
    pub fn status(code: u16) -> Self {
        Fault::Status {
            code,
            retry_after: None,
            message: None,
        }
    }
}
