//! Where a run's task comes from: the argument, stdin, or a continued
//! session's notice with either.

use crate::run_options::RunOptions;
use crate::stream_input::StreamInput;
use anyhow::Context as _;
use kaizen_app::session::{self, Continued};
use kaizen_app::session_builder::{SetupError, usage};
use std::io::{IsTerminal, Read};

/// With `--input-format stream-json`: the input, and its first message
/// (the task); the task must not also be an argument.
pub async fn stream_input(
    options: &RunOptions,
) -> Result<(Option<StreamInput>, Option<String>), SetupError> {
    let mut input = match options.stream_input {
        true if options.task.is_some() => {
            return Err(usage(anyhow::anyhow!(
                "with --input-format stream-json the task is the first message on stdin, not an argument"
            )));
        }
        true => Some(StreamInput::start()),
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
/// `argument` (or stdin); for a continued session, its notice before
/// either, and none at all for a compaction by hand (`compact_only`).
pub fn task_for(
    continued: Option<&Continued>,
    first: Option<String>,
    argument: Option<String>,
    compact_only: bool,
) -> Result<Option<String>, SetupError> {
    let Some(continued) = continued else {
        return match first {
            Some(first) => Ok(Some(first)),
            None => read_task(argument).map(Some),
        };
    };
    if compact_only {
        return Ok(None);
    }
    let task = match first {
        Some(first) => Some(first),
        None => optional_task(argument)?,
    };
    if let Some(why) = session::nothing_to_do(continued, task.as_deref()) {
        return Err(usage(anyhow::anyhow!(why)));
    }
    Ok(Some(match task {
        Some(task) => format!("{}\n\n{task}", continued.notice),
        None => continued.notice.clone(),
    }))
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
