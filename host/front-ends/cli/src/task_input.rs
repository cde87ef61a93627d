//! Where a run's task comes from: the argument, stdin, or stream-json
//! input's first message; a continued session's notice goes before it
//! ([`Opened::task`]).

use crate::output::Printer;
use crate::run_options::TaskFrom;
use crate::stream_input::StreamInput;
use anyhow::Context as _;
use kaizen_app::run::Opened;
use kaizen_app::session_builder::{SetupError, usage};
use kaizen_protocol::CancellationToken;
use std::io::{IsTerminal, Read};
use std::sync::Arc;

/// With `--input-format stream-json`: the input, and its first message
/// (the task); the task must not also be an argument.
pub async fn stream_input(
    from: &TaskFrom,
    printer: &Arc<Printer>,
    interrupt: &CancellationToken,
) -> Result<(Option<StreamInput>, Option<String>), SetupError> {
    let mut input = match from.stream_json {
        true if from.argument.is_some() => {
            return Err(usage(anyhow::anyhow!(
                "with --input-format stream-json the task is the first message on stdin, not an argument"
            )));
        }
        true => Some(StreamInput::start(printer.clone(), interrupt.clone())),
        false => None,
    };
    let first = match &mut input {
        Some(input) => Some(input.next_message().await.ok_or_else(|| {
            usage(anyhow::anyhow!(
                "stdin closed before a user message came (--input-format stream-json)"
            ))
        })?),
        None => None,
    };
    Ok((input, first))
}

/// The task a run starts with: `first` (a stream-json message) or
/// `argument` (or stdin: a new session needs a task, a continued one may
/// go on without), after the continued session's notice.
pub fn task_for(
    opened: &Opened,
    first: Option<String>,
    argument: Option<String>,
) -> Result<Option<String>, SetupError> {
    let given = match (first, opened.continued()) {
        (Some(first), _) => Some(first),
        (None, None) => Some(read_task(argument)?),
        (None, Some(_)) => optional_task(argument)?,
    };
    opened.task(given)
}

/// A resumed session's new task: the argument, or stdin when it is not a
/// terminal and says something; none otherwise.
fn optional_task(task: Option<String>) -> Result<Option<String>, SetupError> {
    if task.is_some() || std::io::stdin().is_terminal() {
        return Ok(task.filter(|task| !task.trim().is_empty()));
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading the task from stdin")?;
    Ok(Some(text).filter(|task| !task.trim().is_empty()))
}

/// A new task: `task`, else all of stdin (which must not be a terminal);
/// it must say something.
pub fn read_task(task: Option<String>) -> Result<String, SetupError> {
    let task = match task {
        Some(task) => task,
        None if std::io::stdin().is_terminal() => {
            return Err(usage(anyhow::anyhow!(
                "no task given: pass it as an argument (kaizen run \"fix the failing test\") or on stdin"
            )));
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the task from stdin")?;
            text
        }
    };
    if task.trim().is_empty() {
        return Err(usage(anyhow::anyhow!("the task is empty")));
    }
    Ok(task)
}
