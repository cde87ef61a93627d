//! The end of the model's work: the Stop (or, in a sub-agent,
//! SubagentStop) hooks decide whether the run may end, or send the model
//! back to work a bounded number of times in a row.

use crate::hook_points::{HookPoint, fire, stopped_by};
use crate::session_journal::Entry;
use crate::turn::{Ending, Turn};
use kaizen_hooks::HookAction;
use kaizen_llm::{Block, Message, Role};

/// Asks the hooks whether the run may end after the model's `last`
/// message. `Err(None)`: a hook sent the model back to work (its reason is
/// now the next user message); `Err(Some(..))`: a hook stopped the
/// session.
pub(crate) async fn may_stop(
    turn: &mut Turn<'_>,
    last: &str,
    continuations: u32,
) -> Result<(), Option<Ending>> {
    let continued = continuations > 0;
    let agent = turn.base.agent.clone();
    let point = match &agent {
        Some((_, kind)) => HookPoint::SubagentStop {
            kind,
            continued,
            last,
        },
        None => HookPoint::Stop { continued, last },
    };
    let event = point.event();
    let hooks = fire(turn, point).await;
    match &hooks.action {
        HookAction::Stop(reason) => Err(Some(stopped_by(&hooks.decided_by, reason))),
        HookAction::Deny(reason) if continuations < turn.guard.max_stop_continuations => {
            let by = hooks.decided_by.as_deref().unwrap_or("a hook");
            let text = format!("A {event} hook ({by}) did not let the session end yet:\n{reason}");
            let message = Message {
                role: Role::User,
                content: vec![Block::Text { text }],
            };
            turn.commit(Entry::User { message });
            Err(None)
        }
        HookAction::Deny(_) => {
            turn.notice(
                &format!("{event} hooks"),
                format!(
                    "{event} hooks kept the session going {continuations} times in a row; it ends now"
                ),
            );
            Ok(())
        }
        _ => Ok(()),
    }
}
