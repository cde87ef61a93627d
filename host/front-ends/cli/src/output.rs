//! How `kaizen run` shows a run: text streamed as it arrives, one JSON
//! object at the end, Claude Code's message stream, or one of Kaizen's
//! events per line; plus a progress line on a terminal's stderr.

use crate::claude_stream::{self, ClaudeStream};
use crate::terminal::{StatusLine, printable};
use clap::ValueEnum;
use kaizen_protocol::{Event, Observer, RunResult};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The model's text as it arrives; errors on stderr.
    Text,
    /// One result object at the end.
    Json,
    /// Claude Code's message stream, one message per line, the result
    /// last: what Claude Code's Agent SDKs read.
    StreamJson,
    /// Kaizen's own events, one per line as the run goes, the result last.
    Events,
}

/// Writes events to stdout in the chosen format and a progress line to
/// stderr when stderr is a terminal of its own.
pub struct Printer {
    format: OutputFormat,
    progress: bool,
    /// Text mode on a terminal: tool activity is shown on stderr.
    activity: bool,
    /// `stream-json`: the events told as Claude Code's messages.
    claude: Option<ClaudeStream>,
    state: Mutex<PrintState>,
}

#[derive(Default)]
struct PrintState {
    /// The last text written to stdout did not end with a newline.
    open_line: bool,
    /// A progress line is on stderr and must be cleared before other output.
    progress_shown: bool,
    /// A question is on the terminal: the progress line would overwrite it.
    prompting: bool,
    /// What the run's result reports beside it (see [`Printer::set_warnings`]).
    warnings: Vec<String>,
    /// Results are printed by [`Printer::print_result`] only, not as
    /// they come (see [`Printer::hold_results`]).
    holding: bool,
}

impl Printer {
    /// A printer for `format`.
    pub fn new(format: OutputFormat) -> Self {
        let stderr_tty = std::io::stderr().is_terminal();
        let stdout_tty = std::io::stdout().is_terminal();
        // Streaming text to the same terminal would fight with the line.
        let progress = stderr_tty && !(format == OutputFormat::Text && stdout_tty);
        Self {
            format,
            progress,
            activity: format == OutputFormat::Text && stderr_tty,
            claude: (format == OutputFormat::StreamJson).then(|| ClaudeStream::new(false)),
            state: Mutex::default(),
        }
    }

    /// `--include-partial-messages`: with `stream-json`, the model's text
    /// as it streams too (`stream_event` messages).
    pub fn with_partial_messages(mut self, partial: bool) -> Self {
        if self.claude.is_some() {
            self.claude = Some(ClaudeStream::new(partial));
        }
        self
    }

    /// What `stream-json`'s init message says of the session besides the
    /// run's start event.
    pub fn set_session(&self, session: claude_stream::Session) {
        if let Some(claude) = &self.claude {
            claude.set_session(session);
        }
    }

    /// The run's warnings: part of the `json` result object, and one
    /// warning line each for the streams, printed now.
    pub fn set_warnings(&self, warnings: Vec<String>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for message in &warnings {
            self.stream_warning(message);
        }
        state.warnings = warnings;
    }

    /// A warning as the stream formats print it: Kaizen's `warning` event,
    /// or a `kaizen_warning` system message.
    fn stream_warning(&self, message: &str) {
        match self.format {
            OutputFormat::Events => {
                print_json(&serde_json::json!({ "type": "warning", "message": message }))
            }
            OutputFormat::StreamJson => print_json(&claude_stream::warning(message)),
            OutputFormat::Text | OutputFormat::Json => {}
        }
    }

    fn progress(&self, state: &mut PrintState, line: &str) {
        if !self.progress || state.prompting {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{}", printable(line));
        let _ = err.flush();
        state.progress_shown = true;
    }

    fn clear_progress(&self, state: &mut PrintState) {
        if state.progress_shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            state.progress_shown = false;
        }
    }

    /// Prints the final result as the format wants it (JSON formats print
    /// it from the event stream; text prints the error, if any).
    pub fn finish(&self, result: &RunResult) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.clear_progress(&mut state);
        if self.format == OutputFormat::Text {
            if state.open_line {
                println!();
            }
            if let Some(message) = &result.error_message {
                eprintln!(
                    "kaizen: {} — {}",
                    result.status.as_str(),
                    printable(message)
                );
            }
        }
    }
}

impl StatusLine for Printer {
    fn show_progress(&self, line: &str) -> bool {
        if !self.progress {
            return false;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.progress(&mut state, line);
        true
    }

    fn set_prompting(&self, open: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.clear_progress(&mut state);
        state.prompting = open;
    }
}

impl Observer for Printer {
    fn on_event(&self, event: &Event) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::SessionStart { model, .. } => {
                self.progress(&mut state, &format!("kaizen: starting ({model})"))
            }
            Event::Assistant { cycle, .. } => {
                self.progress(&mut state, &format!("kaizen: cycle {cycle}: thinking done"))
            }
            Event::ToolCall { name, .. } => {
                self.progress(&mut state, &format!("kaizen: running {name}…"))
            }
            Event::SubAgent { event, .. } => {
                if let Event::ToolCall { name, .. } = &**event {
                    self.progress(&mut state, &format!("kaizen: sub-agent running {name}…"))
                }
            }
            Event::Retry { attempt, error } => self.progress(
                &mut state,
                &format!("kaizen: provider failed ({error}); attempt {attempt}…"),
            ),
            _ => {}
        }
        match self.format {
            OutputFormat::Text => {
                if self.activity {
                    self.show_activity(&mut state, event);
                }
                // What hooks tell the user, and their failures, are for the
                // user whatever the terminal.
                if let Some(line) = notice_line(event) {
                    self.clear_progress(&mut state);
                    eprintln!("kaizen: {}", printable(&line));
                }
                if let Event::TextDelta { text } = event {
                    self.clear_progress(&mut state);
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(printable(text).as_bytes());
                    let _ = out.flush();
                    if !text.is_empty() {
                        state.open_line = !text.ends_with('\n');
                    }
                }
                if let Event::Assistant { .. } = event
                    && state.open_line
                {
                    println!();
                    state.open_line = false;
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson | OutputFormat::Events => match event {
                Event::Result(result) if !state.holding => self.write_result(&mut state, result),
                Event::Result(_) => {}
                // Deltas would repeat what the assistant event carries.
                _ if self.format == OutputFormat::Events && !is_delta(event) => {
                    self.clear_progress(&mut state);
                    print_json(event);
                }
                _ => {
                    if let Some(claude) = &self.claude {
                        self.clear_progress(&mut state);
                        for message in claude.messages(event) {
                            print_json(&message);
                        }
                    }
                }
            },
        }
    }
}

impl Printer {
    /// Holds back results as they come: the caller settles which result
    /// stands (a runtime that did no work may be passed over for the
    /// next) and prints that one with [`Printer::print_result`].
    pub fn hold_results(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.holding = true;
    }

    /// Prints `result` as a result event would be, even while holding,
    /// with `notes` added to the run's warnings (told as the run's
    /// warnings are: on stderr for text, as warning lines for the
    /// streams, in the result object for json).
    pub fn print_result(&self, result: &RunResult, notes: &[String]) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.clear_progress(&mut state);
        for message in notes {
            match self.format {
                OutputFormat::Text => eprintln!("kaizen: warning: {}", printable(message)),
                _ => self.stream_warning(message),
            }
        }
        state.warnings.extend(notes.iter().cloned());
        self.write_result(&mut state, result);
    }

    /// The result as the format shows it: the object with the warnings
    /// (json), the result message or event (the streams); text shows the
    /// answer as it streams, and the error in [`Printer::finish`].
    fn write_result(&self, state: &mut PrintState, result: &RunResult) {
        self.clear_progress(state);
        match self.format {
            OutputFormat::Text => {}
            OutputFormat::Json => print_json(&WithWarnings {
                result,
                warnings: &state.warnings,
            }),
            OutputFormat::StreamJson => print_json(&claude_stream::result_message(result)),
            OutputFormat::Events => print_json(&Event::Result(result.clone())),
        }
    }

    /// Writes `value` as a line of its own on stdout (a stream line that
    /// is not a run's event, such as a question for the embedder).
    pub fn line<T: serde::Serialize>(&self, value: &T) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.clear_progress(&mut state);
        print_json(value);
    }

    /// One dim line per tool call and failure, between the answer's text.
    fn show_activity(&self, state: &mut PrintState, event: &Event) {
        let Some(line) = activity_line(event) else {
            return;
        };
        self.clear_progress(state);
        let mut out = std::io::stdout().lock();
        if state.open_line {
            let _ = writeln!(out);
            state.open_line = false;
        }
        let _ = out.flush();
        eprintln!("\x1b[2m{}\x1b[0m", printable(&line));
    }
}

/// True for a streamed piece of text, the parent's or a sub-agent's.
fn is_delta(event: &Event) -> bool {
    match event {
        Event::TextDelta { .. } => true,
        Event::SubAgent { event, .. } => is_delta(event),
        _ => false,
    }
}

/// The dim line shown for a tool call or failure; a sub-agent's are
/// indented under the call that started it.
fn activity_line(event: &Event) -> Option<String> {
    let line = match event {
        Event::ToolCall {
            name, arguments, ..
        } => format!("→ {name} {}", shorten(&arguments.to_string(), 100)),
        Event::ToolResult {
            name,
            status,
            output,
            ..
        } if status == "error" => {
            let first = output.lines().next().unwrap_or_default();
            format!("  ✗ {name}: {}", shorten(first, 100))
        }
        Event::PermissionDecision {
            name, decision, by, ..
        } if decision == "deny" => format!("  ✗ {name}: refused (by {by})"),
        Event::SubAgent { event, .. } => format!("    {}", activity_line(event)?),
        _ => return None,
    };
    Some(line)
}

/// What a hook says to the user, or that it failed.
fn notice_line(event: &Event) -> Option<String> {
    match event {
        Event::Notice { source, text } => Some(format!("{source}: {text}")),
        Event::Hook {
            event,
            hook,
            outcome,
            reason,
        } if outcome == "failed" => Some(format!(
            "hook {hook} failed on {event}: {}",
            reason.as_deref().unwrap_or("no reason given")
        )),
        Event::SubAgent { event, .. } => notice_line(event),
        _ => None,
    }
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The result object with the run's warnings (the sandbox running
/// degraded, say): always present, empty when there are none.
#[derive(serde::Serialize)]
struct WithWarnings<'a> {
    #[serde(flatten)]
    result: &'a RunResult,
    warnings: &'a [String],
}

fn print_json<T: serde::Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    if let Ok(line) = serde_json::to_string(value) {
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
