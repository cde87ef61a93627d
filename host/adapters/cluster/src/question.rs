//! What a turn asks a person and what it is answered, as the session's
//! stream and the engine carry them (asked through [`crate::asks`]).

use kaizen_protocol::{Approval, ApprovalRequest};
use serde::{Deserialize, Serialize};

/// A question a turn waits on, as the stream carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Question {
    /// May this tool call run? ("Always" adds its rule for the rest of
    /// the turn.)
    Approval(ApprovalRequest),
    /// Multiple-choice questions, from a plugin (`ask` for
    /// `AskUserQuestion`).
    Choices {
        /// The plugin asking.
        plugin: String,
        /// Its questions, answered together.
        questions: Vec<Choices>,
    },
}

/// One multiple-choice question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choices {
    /// The full question.
    pub question: String,
    /// A short label for it.
    pub header: String,
    /// The choices, as (label, description).
    pub options: Vec<(String, String)>,
    /// Whether several may be chosen.
    pub multi_select: bool,
}

/// The answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// Run the call once.
    Once,
    /// Run it, and every call its `always_rule` matches for the rest of
    /// the turn.
    Always,
    /// Refuse it; the text (possibly empty) goes to the model.
    Deny {
        /// What the model is told.
        #[serde(default)]
        message: String,
    },
    /// Run it with this input instead (the approver edited it).
    Edited {
        /// The input to run.
        input: serde_json::Value,
    },
    /// The labels (or free text) chosen for each of the questions, in
    /// order.
    Chosen {
        /// One list per question.
        selected: Vec<Vec<String>>,
    },
    /// The questions are declined.
    Declined,
}

impl From<Approval> for Answer {
    fn from(approval: Approval) -> Self {
        match approval {
            Approval::Once => Self::Once,
            Approval::Always => Self::Always,
            Approval::Deny(message) => Self::Deny { message },
            Approval::Edited(input) => Self::Edited { input },
        }
    }
}
