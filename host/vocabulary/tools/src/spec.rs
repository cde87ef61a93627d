//! The tool abstraction: specs, call context, outputs and errors.

use crate::completion::CompletionLink;
use crate::history::FileHistoryLink;
use crate::session::SessionNotes;
use crate::sub_agent::SubAgentLink;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

pub use kaizen_protocol::Danger;

/// What permission rules' specifiers match in a tool's input: which field,
/// and as what. `Bash(npm test:*)` matches a `command`; `Read(./.env)` any
/// tool's `read-path`; `Edit(src/**)` any `edit-path`;
/// `WebFetch(domain:x.com)` a `url`; `Task(Explore)` a `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSubject {
    /// What the field holds.
    pub kind: SubjectKind,
    /// The input field (a top-level key of the input object).
    pub field: String,
}

/// What kind of value a [`RuleSubject`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubjectKind {
    /// A shell command line.
    Command,
    /// A path the tool reads.
    ReadPath,
    /// A path the tool changes.
    EditPath,
    /// A URL the tool fetches.
    Url,
    /// A name (a sub-agent type, a skill).
    Name,
}

/// Describes one tool to the loop and to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: serde_json::Value,
    /// How much harm the tool can do.
    pub danger: Danger,
    /// True when calls never change anything and may run concurrently.
    pub read_only: bool,
}

/// What a tool is told about the call it serves.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallContext {
    /// The session the call belongs to.
    pub session_id: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The session's workspace.
    pub workspace: PathBuf,
    /// Where relative paths resolve.
    pub cwd: PathBuf,
    /// The session's shared notes (files read, the todo list). Not
    /// serialized: the session's state keeps the durable copy.
    #[serde(skip)]
    pub notes: Arc<SessionNotes>,
    /// Where the call may start sub-agents; empty when it may not.
    #[serde(skip)]
    pub sub_agents: SubAgentLink,
    /// Where the call's plugin may ask the session's model for a
    /// completion; empty when there is no model.
    #[serde(skip)]
    pub completions: CompletionLink,
    /// Where files are kept before the call changes them.
    #[serde(skip)]
    pub history: FileHistoryLink,
}

/// One piece of a tool result as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An encoded image.
    Image {
        /// IANA media type.
        media_type: String,
        /// The encoded bytes.
        data: Vec<u8>,
    },
}

/// A successful tool result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<ContentPart>,
    /// Structured result for programs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
}

impl ToolOutput {
    /// A result holding one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentPart::Text { text: text.into() }],
            metadata: None,
        }
    }

    /// All text parts joined by newlines (images are left out).
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(text.as_str()),
                ContentPart::Image { .. } => None,
            })
            .collect();
        texts.join("\n")
    }

    /// Bytes the result occupies: text, image data and metadata.
    pub fn size_bytes(&self) -> usize {
        let parts: usize = self
            .content
            .iter()
            .map(|part| match part {
                ContentPart::Text { text } => text.len(),
                ContentPart::Image { media_type, data } => media_type.len() + data.len(),
            })
            .sum();
        parts
            + self
                .metadata
                .as_ref()
                .map_or(0, |meta| meta.to_string().len())
    }
}

/// Why a tool call failed. The kinds a tool reports itself come first; the
/// rest are raised by the registry or the host around the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The input was wrong.
    InvalidInput,
    /// Something the input named does not exist.
    NotFound,
    /// The tool was not allowed to do what was asked.
    PermissionDenied,
    /// The state changed under the tool.
    Conflict,
    /// The work took too long.
    Timeout,
    /// Any other failure the tool reported.
    Failed,
    /// No tool has the requested name.
    UnknownTool,
    /// The arguments were not valid JSON.
    InvalidJson,
    /// The arguments did not match the input schema.
    SchemaViolation,
    /// The tool's implementation crashed (a trap, a panic, a broken reply).
    Crashed,
    /// The tool hit a resource limit (memory, CPU time, output size).
    ResourceLimit,
}

/// A failed call, with a message written for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct ToolError {
    /// The category of failure.
    pub kind: ToolErrorKind,
    /// What went wrong and what to do next.
    pub message: String,
}

impl ToolError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The future a tool call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// A tool the loop can call.
pub trait Tool: Send + Sync {
    /// The tool's description.
    fn spec(&self) -> &ToolSpec;

    /// Where the tool comes from (a plugin name, `mcp:server`, ...), for
    /// messages and listings.
    fn source(&self) -> &str;

    /// What permission rules' specifiers match in this tool's input; `None`
    /// when only rules naming the whole tool apply to it.
    fn rule_subject(&self) -> Option<&RuleSubject> {
        None
    }

    /// True when everything the tool can do stays inside what the session
    /// granted: its directories, no network, every program in the full OS
    /// sandbox. The default permission mode runs such a tool without
    /// asking; a tool that does not know says `false`.
    fn contained(&self) -> bool {
        false
    }

    /// Runs the tool. `input` has already passed the spec's input schema.
    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a>;
}
