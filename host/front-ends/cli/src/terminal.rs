//! Plugins' questions asked on the terminal: the [`Interaction`] that
//! `kaizen run` uses when a person is at the keyboard.
//!
//! Each question is printed on stderr with numbered options; the answer is
//! read from stdin, checked, and asked again until it is usable. One
//! prompt is on screen at a time: concurrent calls wait their turn. Ctrl-D
//! on an empty line declines the whole set of questions.

mod approval;
mod lines;
mod prompt;

pub use approval::TerminalApprover;
use lines::LineReader;
pub use prompt::{clean, clipped, printable};

use kaizen_app::trust::{ConfigSnapshot, TrustStatus};
use kaizen_plugin_host::interaction::{
    Answer, AskFuture, Interaction, InteractionError, NoUser, Question,
};
use kaizen_protocol::CancellationToken;
use std::io::{self, BufRead, Write};
use std::sync::Arc;

/// Asks the person at the terminal whether to trust the workspace's
/// configuration, showing what it holds: `y` or `yes` trusts it; anything
/// else, or the end of input, does not. Read before the run starts, while
/// nothing else reads the terminal.
pub fn ask_trust(config: &ConfigSnapshot, status: TrustStatus) -> bool {
    let why = match status {
        TrustStatus::Changed => "has changed since you trusted it",
        _ => "has not been trusted yet",
    };
    let mut err = io::stderr().lock();
    let _ = write!(
        err,
        "The workspace {} {why}. It configures Kaizen with:\n{}\n\
         Trusted, these can grant tools more access (programs, network, directories) and \
         load the workspace's own plugins; untrusted, they can only lower limits.\n\
         Trust this workspace? [y/N] ",
        config.root.display(),
        config.listing()
    );
    let _ = err.flush();
    let mut line = String::new();
    match io::stdin().lock().read_line(&mut line) {
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
        Err(_) => false,
    }
}

/// The run's status display, which the prompt must not fight with.
pub trait StatusLine: Send + Sync {
    /// Shows a plugin's progress `line`; false when there is no display to
    /// show it on (then the caller logs it).
    fn show_progress(&self, line: &str) -> bool;

    /// Marks a prompt as open (the display clears its line and stays
    /// quiet) or closed again.
    fn set_prompting(&self, open: bool);
}

/// Asks plugins' questions on the terminal (stderr out, stdin in).
pub struct TerminalInteraction {
    status: Arc<dyn StatusLine>,
    /// The run's interrupt: Ctrl-C at a prompt declines it at once.
    interrupt: CancellationToken,
    /// Held for the whole of one `ask`: one prompt at a time.
    turn: tokio::sync::Mutex<()>,
    reader: LineReader,
}

impl TerminalInteraction {
    /// Asks on this process's terminal; progress goes to `status`; an
    /// `interrupt` declines the open prompt.
    pub fn new(status: Arc<dyn StatusLine>, interrupt: CancellationToken) -> Self {
        Self {
            status,
            interrupt,
            turn: tokio::sync::Mutex::new(()),
            reader: LineReader::default(),
        }
    }

    async fn ask_all(
        &self,
        plugin: &str,
        questions: Vec<Question>,
    ) -> Result<Vec<Answer>, InteractionError> {
        let _turn = self.turn.lock().await;
        let _open = self.prompting();
        if plugin != "ask" {
            // Built-in questions need no introduction; others say who asks.
            say(&format!(
                "\n\x1b[2mThe plugin `{}` asks:\x1b[0m",
                prompt::clean(plugin)
            ));
        }
        let mut answers = Vec::with_capacity(questions.len());
        for (index, question) in questions.iter().enumerate() {
            say(&prompt::render(question, index, questions.len()));
            let selected = loop {
                say("> ");
                let read = tokio::select! {
                    read = self.reader.read_line() => read,
                    () = self.interrupt.cancelled() => {
                        say("\n(interrupted)\n");
                        return Err(InteractionError::Declined);
                    }
                };
                let line = match read {
                    Ok(Some(line)) => line,
                    Ok(None) => {
                        say("\n(declined)\n");
                        return Err(InteractionError::Declined);
                    }
                    Err(err) => {
                        tracing::warn!("cannot read an answer from the terminal: {err}");
                        return Err(InteractionError::NoUser);
                    }
                };
                match prompt::parse(question, &line) {
                    Ok(selected) => break selected,
                    Err(why) => say(&format!("\x1b[33m{why}\x1b[0m\n")),
                }
            };
            answers.push(Answer {
                question: question.question.clone(),
                selected,
            });
        }
        // Sets the answers apart from what the run prints next.
        say("\n");
        Ok(answers)
    }
}

impl TerminalInteraction {
    /// Marks a prompt open until the guard drops: the status display keeps
    /// quiet, and a line typed meanwhile answers the prompt (it is never
    /// taken as a message for the run).
    fn prompting(&self) -> Prompting<'_> {
        self.reader.set_prompting(true);
        self.status.set_prompting(true);
        Prompting(self)
    }

    /// From now on, lines typed while no prompt is open are messages for
    /// the run: each goes to `inbox`, and the terminal says it is queued.
    pub fn queue_into(&self, inbox: kaizen_loop::Inbox) {
        self.reader.read_continuously(Box::new(move |line: String| {
            let line = line.trim_end().to_string();
            if line.trim().is_empty() {
                return;
            }
            say(&format!(
                "\x1b[2mkaizen: queued for the next step: {}\x1b[0m\n",
                prompt::clean(&line)
            ));
            inbox.send(line);
        }));
    }
}

impl Interaction for TerminalInteraction {
    fn ask<'a>(&'a self, plugin: &'a str, questions: Vec<Question>) -> AskFuture<'a> {
        Box::pin(self.ask_all(plugin, questions))
    }

    fn progress(&self, plugin: &str, message: &str, fraction: Option<f32>) {
        let line = match fraction {
            Some(fraction) => format!("kaizen: {plugin}: {message} ({:.0}%)", fraction * 100.0),
            None => format!("kaizen: {plugin}: {message}"),
        };
        if !self
            .status
            .show_progress(&prompt::clean(&line).replace('\n', " "))
        {
            NoUser.progress(plugin, message, fraction);
        }
    }
}

/// Writes `text` to stderr at once (a prompt has no newline to flush it).
fn say(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Keeps the status display quiet, and typed lines for the prompt, while a
/// prompt is open, however the ask ends (answered, declined, or dropped by
/// an interrupt or a timeout).
struct Prompting<'a>(&'a TerminalInteraction);

impl Drop for Prompting<'_> {
    fn drop(&mut self) {
        self.0.status.set_prompting(false);
        self.0.reader.set_prompting(false);
    }
}

#[cfg(test)]
mod tests;
