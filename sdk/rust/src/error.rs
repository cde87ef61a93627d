//! What a tool returns on failure.

use std::fmt;
use std::io;

/// Why a call failed, in a form the model can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input was wrong (bad value, missing file named in it, ...).
    InvalidInput,
    /// Something the input named does not exist.
    NotFound,
    /// The plugin was not allowed to do what the input asked.
    PermissionDenied,
    /// The state changed under the tool (e.g. a file edited since read).
    Conflict,
    /// The work took too long.
    Timeout,
    /// Anything else.
    Failed,
}

/// A failed call. The message is shown to the model: say what went wrong
/// and what to do next.
///
/// `std::io::Error` converts into it (so `?` works on file operations); add
/// the path with [`ToolError::context`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
}

impl ToolError {
    /// An error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The input was wrong.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Something the input named does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// The plugin was not allowed to do what the input asked.
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::PermissionDenied, message)
    }

    /// The state changed under the tool.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, message)
    }

    /// The work took too long.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, message)
    }

    /// Any other failure.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Failed, message)
    }

    /// Prefixes the message with `context` (e.g. the path an I/O error is
    /// about): `"<context>: <message>"`.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message the model sees.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<io::Error> for ToolError {
    /// Maps the I/O error kind to the closest [`ErrorKind`]; the message is
    /// the error's text.
    fn from(err: io::Error) -> Self {
        use io::ErrorKind as Io;
        let kind = match err.kind() {
            Io::NotFound => ErrorKind::NotFound,
            Io::PermissionDenied | Io::ReadOnlyFilesystem => ErrorKind::PermissionDenied,
            Io::AlreadyExists
            | Io::DirectoryNotEmpty
            | Io::ResourceBusy
            | Io::ExecutableFileBusy
            | Io::StaleNetworkFileHandle => ErrorKind::Conflict,
            Io::TimedOut => ErrorKind::Timeout,
            Io::InvalidInput
            | Io::InvalidData
            | Io::InvalidFilename
            | Io::IsADirectory
            | Io::NotADirectory
            | Io::NotSeekable
            | Io::ArgumentListTooLong => ErrorKind::InvalidInput,
            _ => ErrorKind::Failed,
        };
        Self::new(kind, err.to_string())
    }
}
