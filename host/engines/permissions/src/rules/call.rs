//! A tool call as rules see it: the tool, what it exposes to specifiers,
//! and, for a command line, the line taken apart.

use kaizen_protocol::Danger;
use std::path::{Path, PathBuf};

use crate::shell_words::{self, Split, Unanalyzable};

/// What a tool call exposes to rule specifiers; the tool declares which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The tool declares nothing a specifier can match.
    None,
    /// A shell command line (Bash).
    Command(String),
    /// A path the tool reads (Read, Grep, Glob…); absolute or relative to
    /// [`CallFacts::cwd`].
    ReadPath(PathBuf),
    /// A path the tool changes (Edit, Write, MultiEdit, NotebookEdit).
    EditPath(PathBuf),
    /// A URL the tool fetches (WebFetch).
    Url(String),
    /// A name argument (Task's subagent type, a skill name).
    Name(String),
}

/// One call as rules see it.
#[derive(Debug, Clone)]
pub struct CallFacts<'a> {
    /// The tool's name, compared case-sensitively.
    pub tool: &'a str,
    /// How much harm the tool can do, for `danger:` rules.
    pub danger: Danger,
    /// What the call exposes to specifiers.
    pub subject: Subject,
    /// Where relative paths in the call resolve.
    pub cwd: &'a Path,
}

/// A command line taken apart (or refused), once per call; None when the
/// call runs no command.
pub(super) fn split_of(call: &CallFacts) -> Option<Result<Split, Unanalyzable>> {
    match &call.subject {
        Subject::Command(command) => Some(shell_words::split(command)),
        _ => None,
    }
}
