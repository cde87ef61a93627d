//! What a session's assembly has to tell its user on the way: parts of the
//! workspace's configuration not applied, an MCP server that did not
//! start, memory left out, the guard's notes. The library prints nothing;
//! each front end says where notices go (the `kaizen` command writes them
//! to stderr, an editor protocol could show them in its UI, an embedding
//! program could log them).

use std::fmt;
use std::sync::Arc;

/// One thing the user should know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Something is missing or degraded; the session goes on without it.
    Warning(String),
    /// How the session was set up (which configuration applied, what a
    /// rule means), for the user to check.
    Note(String),
    /// A program's own output, passed on as the program wrote it, line
    /// ends included: a plugin kit's toolchain, whose diagnostics are what
    /// the user reads when a build fails.
    Output(String),
}

impl fmt::Display for Notice {
    /// `warning: TEXT`, or `TEXT` as it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Warning(text) => write!(f, "warning: {text}"),
            Notice::Note(text) | Notice::Output(text) => f.write_str(text),
        }
    }
}

/// Where notices go: a function the front end gives.
#[derive(Clone)]
pub struct Notices(Arc<dyn Fn(&Notice) + Send + Sync>);

impl Notices {
    /// Notices handed to `tell`.
    pub fn new(tell: impl Fn(&Notice) + Send + Sync + 'static) -> Self {
        Self(Arc::new(tell))
    }

    /// Notices as `tracing` events (warnings at `warn`, notes and
    /// programs' output at `info`), for a front end with no user to tell.
    pub fn to_log() -> Self {
        Self::new(|notice| match notice {
            Notice::Warning(text) => tracing::warn!("{text}"),
            Notice::Note(text) => tracing::info!("{text}"),
            Notice::Output(text) => tracing::info!("{}", text.trim_end()),
        })
    }

    /// Tells a warning.
    pub fn warn(&self, text: impl Into<String>) {
        (self.0)(&Notice::Warning(text.into()));
    }

    /// Tells a note.
    pub fn note(&self, text: impl Into<String>) {
        (self.0)(&Notice::Note(text.into()));
    }

    /// Passes on a program's output; nothing when it wrote nothing.
    pub fn output(&self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            (self.0)(&Notice::Output(text));
        }
    }
}

impl fmt::Debug for Notices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Notices")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn notices_reach_the_function_given_in_order() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let notices = Notices::new(move |notice| sink.lock().unwrap().push(notice.to_string()));
        notices.note("configuration not applied in full");
        notices.warn("the MCP server `db` did not start");
        assert_eq!(
            *heard.lock().unwrap(),
            [
                "configuration not applied in full",
                "warning: the MCP server `db` did not start"
            ]
        );
    }

    #[test]
    fn a_programs_output_passes_as_written_and_silence_is_not_told() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let notices = Notices::new(move |notice| sink.lock().unwrap().push(notice.clone()));
        notices.output("");
        notices.output("error[E0425]: cannot find value `x`\n");
        let heard = heard.lock().unwrap().clone();
        assert_eq!(
            heard,
            [Notice::Output(
                "error[E0425]: cannot find value `x`\n".into()
            )]
        );
        assert_eq!(
            heard[0].to_string(),
            "error[E0425]: cannot find value `x`\n"
        );
    }
}
