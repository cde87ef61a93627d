//! The session as a sequence of entries: each change the loop makes to its
//! [`SessionState`] is also told to a [`Journal`] as one [`Entry`], in
//! order, as soon as it is complete. Replaying the entries after a
//! checkpoint onto that checkpoint's state gives back the state the loop
//! had, which is how a killed session loses at most its in-flight step.

use crate::state::SessionState;
use kaizen_llm::{Block, Message, Role, Usage};
use kaizen_protocol::{Status, ToolCallRecord};
use kaizen_tools::{FileHistory, NoteChanges, Notes};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// One completed change to a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A run began (or resumed): what it ran with. Changes nothing.
    Start {
        /// The model.
        model: String,
        /// The workspace.
        cwd: String,
        /// The tools on offer.
        tools: Vec<String>,
    },
    /// A user message: a task, or what a resume has to report.
    User {
        /// The message.
        message: Message,
    },
    /// One model call and its response.
    Turn {
        /// The response, as it joins the conversation.
        message: Message,
        /// Its tokens.
        usage: Usage,
        /// Its price.
        cost_usd: f64,
    },
    /// A step's tool calls finished, or were cut off.
    Results {
        /// The results, as they join the conversation; none when the step
        /// was cut off (an interrupt, the time limit).
        message: Option<Message>,
        /// The calls, as they were recorded.
        calls: Vec<ToolCallRecord>,
        /// What the calls noted.
        #[serde(default)]
        notes: NoteChanges,
        /// What the calls' model use spent: the sub-agents they started
        /// and their plugins' completions. (The name is the log's since
        /// before completions.)
        #[serde(default)]
        sub_agent_usage: Usage,
        /// Their price.
        #[serde(default)]
        sub_agent_cost_usd: f64,
    },
    /// A planner's work around a model call: what its completions and the
    /// candidate responses not chosen cost, and the todo list it set.
    Planner {
        /// Their tokens.
        #[serde(default)]
        usage: Usage,
        /// Their price.
        #[serde(default)]
        cost_usd: f64,
        /// The todo list the planner set, if it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        todos: Option<Vec<serde_json::Value>>,
    },
    /// The conversation cleared (`/clear`): the session goes on with no
    /// messages; those before stay in the log above it.
    Clear,
    /// The conversation compacted: the messages before `kept_from` replaced
    /// by `head` (a summary, or the same messages with long tool results
    /// elided). The messages it replaced stay in the log above it.
    Compaction {
        /// What replaces the older messages.
        head: Vec<Message>,
        /// The first message kept as it was.
        kept_from: usize,
        /// Whether `head` is a summary (else the same messages, their long
        /// tool results elided).
        #[serde(default)]
        summarized: bool,
        /// The summary's tokens (none when only results were elided).
        #[serde(default)]
        usage: Usage,
        /// Its price.
        #[serde(default)]
        cost_usd: f64,
    },
    /// The completions hook plugins asked for on one of the session's own
    /// events (`SessionStart`, `Stop`, ...; those on tool events count
    /// with their step): what they cost.
    Hooks {
        /// The event's name (`SessionStart`).
        event: String,
        /// Their tokens.
        #[serde(default)]
        usage: Usage,
        /// Their price.
        #[serde(default)]
        cost_usd: f64,
    },
    /// The run ended.
    End {
        /// How.
        status: Status,
        /// Why, when it ended early.
        error: Option<String>,
    },
}

/// Hears every entry of a session as it completes, and keeps files'
/// contents before tools change them.
pub trait Journal: Send + Sync {
    /// Keeps `entry`; `state` already includes it.
    fn record(&self, entry: &Entry, state: &SessionState);

    /// Whether keeping `entry` (with `state` including it) also writes a
    /// checkpoint, so that the loop can run checkpoint hooks around it.
    fn takes_checkpoint(&self, _entry: &Entry, _state: &SessionState) -> bool {
        false
    }

    /// Waits until every checkpoint handed over so far is written.
    fn flush(&self) {}

    /// Keeps what `path` (beneath the writable directory `root`) holds
    /// now, before a tool of step `step` (the cycle whose calls are
    /// running) changes it.
    fn keep_file(&self, step: u32, root: &Path, path: &Path) -> Result<(), String>;
}

/// Tells `journal` of `entry` without holding up other tasks: a journal
/// writes files (and at a run's end waits for them to reach the disk), so
/// on a multi-threaded tokio runtime the worker's other tasks move to
/// another thread while it does ([`tokio::task::block_in_place`]);
/// elsewhere (a current-thread runtime, no runtime) it simply runs.
pub(crate) fn record_outside_executor(journal: &dyn Journal, entry: &Entry, state: &SessionState) {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| journal.record(entry, state));
        }
        _ => journal.record(entry, state),
    }
}

/// A step's file history: what the step's tool calls use to keep files
/// before they change them.
pub(crate) struct StepFiles {
    pub journal: Arc<dyn Journal>,
    pub step: u32,
}

impl FileHistory for StepFiles {
    fn keep(&self, root: &Path, path: &Path) -> Result<(), String> {
        self.journal.keep_file(self.step, root, path)
    }
}

/// A sub-agent's journal: its conversation is its own, but the files it
/// changes belong to its parent's step.
pub(crate) struct ParentFiles(pub StepFiles);

impl Journal for ParentFiles {
    fn record(&self, _: &Entry, _: &SessionState) {}

    fn keep_file(&self, _: u32, root: &Path, path: &Path) -> Result<(), String> {
        self.0.keep(root, path)
    }
}

impl SessionState {
    /// Applies `entry`: the one way the loop changes a session, live and
    /// when replaying a log. Notes are merged, so applying a step's notes
    /// to state that already has them changes nothing.
    pub fn apply(&mut self, entry: &Entry) {
        match entry {
            Entry::Start { model, .. } => self.model.clone_from(model),
            Entry::User { message } => self.messages.push(message.clone()),
            Entry::Turn {
                message,
                usage,
                cost_usd,
            } => {
                self.cycles += 1;
                self.usage.add(usage);
                self.cost_usd += cost_usd;
                self.messages.push(message.clone());
            }
            Entry::Results {
                message,
                calls,
                notes,
                sub_agent_usage,
                sub_agent_cost_usd,
            } => {
                self.usage.add(sub_agent_usage);
                self.cost_usd += sub_agent_cost_usd;
                let mut kept = Notes {
                    files: std::mem::take(&mut self.read_files),
                    todos: std::mem::take(&mut self.todos),
                    active_skill: None,
                };
                notes.apply_to(&mut kept);
                self.read_files = kept.files;
                self.todos = kept.todos;
                self.tool_calls.extend(calls.iter().cloned());
                self.messages.extend(message.iter().cloned());
            }
            Entry::Planner {
                usage,
                cost_usd,
                todos,
            } => {
                self.usage.add(usage);
                self.cost_usd += cost_usd;
                if let Some(todos) = todos {
                    self.todos.clone_from(todos);
                }
            }
            Entry::Clear => self.messages.clear(),
            Entry::Compaction {
                head,
                kept_from,
                usage,
                cost_usd,
                ..
            } => {
                let kept_from = (*kept_from).min(self.messages.len());
                self.messages.splice(..kept_from, head.iter().cloned());
                self.compactions += 1;
                self.usage.add(usage);
                self.cost_usd += cost_usd;
            }
            Entry::Hooks {
                usage, cost_usd, ..
            } => {
                self.usage.add(usage);
                self.cost_usd += cost_usd;
            }
            Entry::End { status, .. } => self.status = Some(*status),
        }
    }

    /// Tool calls of the last model response that have no result: the
    /// step was cut (an interrupt, a kill) while they ran. Their ids and
    /// names, in call order.
    pub fn unanswered_calls(&self) -> Vec<(String, String)> {
        match self.messages.last() {
            Some(last) if last.role == Role::Assistant => last
                .content
                .iter()
                .filter_map(|block| match block {
                    Block::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The user message a run opens with: results for calls a cut-off step
/// left unanswered, then the task; none when there is neither.
pub(crate) fn opening_message(state: &SessionState, task: Option<&str>) -> Option<Message> {
    let unanswered = state.unanswered_calls();
    let mut message = (!unanswered.is_empty()).then(|| lost_results(&unanswered));
    if let Some(task) = task {
        let text = Block::Text { text: task.into() };
        match &mut message {
            Some(lost) => lost.content.push(text),
            None => {
                message = Some(Message {
                    role: Role::User,
                    content: vec![text],
                })
            }
        }
    }
    message
}

/// The results a resumed session gives the model for calls that were cut
/// off: their effects are unknown, and they are not run again by
/// themselves.
pub fn lost_results(calls: &[(String, String)]) -> Message {
    let content = calls
        .iter()
        .map(|(id, name)| Block::ToolResult {
            tool_use_id: id.clone(),
            content: vec![Block::Text {
                text: format!(
                    "This {name} call was cut off when the session stopped, before its result \
                     came back. It may have done part or all of its work, or none; background \
                     processes it started are gone. Check the current state before relying \
                     on it, and call it again if it is still needed."
                ),
            }],
            is_error: true,
        })
        .collect();
    Message {
        role: Role::User,
        content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unanswered_calls_are_those_of_a_last_response_without_results() {
        let mut state = SessionState::new("s", "m");
        assert!(state.unanswered_calls().is_empty());
        state.apply(&Entry::Turn {
            message: Message {
                role: Role::Assistant,
                content: vec![
                    Block::Text { text: "x".into() },
                    Block::ToolUse {
                        id: "a".into(),
                        name: "Bash".into(),
                        arguments: "{}".into(),
                    },
                ],
            },
            usage: Usage::default(),
            cost_usd: 0.5,
        });
        assert_eq!(state.cycles, 1);
        let calls = state.unanswered_calls();
        assert_eq!(calls, [("a".to_string(), "Bash".to_string())]);
        let lost = lost_results(&calls);
        state.apply(&Entry::User { message: lost });
        assert!(state.unanswered_calls().is_empty());
    }
}
