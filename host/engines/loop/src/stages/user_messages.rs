//! Where user messages join the conversation, each through the
//! `UserPromptSubmit` hooks (which may refuse it or add to it): the run's
//! opening, after its `SessionStart` hooks, and the messages sent while
//! it works (the inbox), taken before each model call (with a change
//! of permission mode sent the same way).

use crate::hook_points::{HookPoint, fire, stopped_by};
use crate::session_journal::{Entry, opening_message};
use crate::turn::{Ending, Turn};
use kaizen_hooks::HookAction;
use kaizen_llm::{Block, Message, Role};
use kaizen_protocol::{Event, Status};

/// The run's opening: `SessionStart` hooks (their context joins the
/// system prompt; a sub-agent has none), then the user's message through
/// `UserPromptSubmit` hooks.
pub(crate) async fn open(
    turn: &mut Turn<'_>,
    task: Option<&str>,
    system: &mut String,
    resumed: bool,
) -> Result<(), Ending> {
    if turn.base.agent.is_none() {
        let source = if resumed { "resume" } else { "startup" };
        let model = turn.config.model.as_str();
        let hooks = fire(turn, HookPoint::SessionStart { source, model }).await;
        if let HookAction::Stop(reason) = &hooks.action {
            return Err(stopped_by(&hooks.decided_by, reason));
        }
        if let Some(context) = hooks.context() {
            system.push_str(&format!("\n<hook-context>\n{context}\n</hook-context>\n"));
        }
    }
    let Some(mut message) = opening_message(turn.state, task) else {
        return Ok(());
    };
    if let Some(task) = task {
        let hooks = fire(turn, HookPoint::UserPromptSubmit { prompt: task }).await;
        match &hooks.action {
            HookAction::Stop(reason) | HookAction::Deny(reason) => {
                let by = hooks.decided_by.as_deref().unwrap_or("a hook");
                return Err((
                    Status::Stopped,
                    Some(format!("the prompt was refused by the hook {by}: {reason}")),
                ));
            }
            _ => {}
        }
        if let Some(context) = hooks.context() {
            message.content.push(Block::Text {
                text: format!("<hook-context>\n{context}\n</hook-context>"),
            });
        }
    }
    turn.commit(Entry::User { message });
    Ok(())
}

/// Takes the messages sent while the run worked into the conversation;
/// a refused one is dropped, and said so; a hook that stops the session
/// ends the run.
pub(crate) async fn take_inbox(turn: &mut Turn<'_>) -> Result<(), Ending> {
    let Some(inbox) = &turn.config.inbox else {
        return Ok(());
    };
    if let Some(mode) = inbox.take_mode() {
        turn.guard.permissions.set_mode(mode);
        turn.notice("permissions", format!("the permission mode is now {mode}"));
    }
    for text in inbox.take_all() {
        let hooks = fire(turn, HookPoint::UserPromptSubmit { prompt: &text }).await;
        match &hooks.action {
            HookAction::Stop(reason) => return Err(stopped_by(&hooks.decided_by, reason)),
            HookAction::Deny(reason) => {
                let by = hooks.decided_by.as_deref().unwrap_or("a hook");
                turn.notice(
                    "UserPromptSubmit hooks",
                    format!("a message was refused by the hook {by}: {reason}"),
                );
                continue;
            }
            _ => {}
        }
        let mut content = vec![Block::Text { text: text.clone() }];
        if let Some(context) = hooks.context() {
            content.push(Block::Text {
                text: format!("<hook-context>\n{context}\n</hook-context>"),
            });
        }
        let message = Message {
            role: Role::User,
            content,
        };
        turn.commit(Entry::User { message });
        turn.observer.on_event(&Event::UserMessage {
            cycle: turn.state.cycles + 1,
            text,
        });
    }
    Ok(())
}
