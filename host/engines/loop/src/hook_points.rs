//! The one place hook events fire. Every point of a session where hooks
//! are handed it is a [`HookPoint`]: its event, what matchers match and
//! the payload's own fields are all here, so adding an event is adding a
//! variant. Every event reaches the hooks through [`dispatch`], which
//! builds the payload (only when some hook wants the event) and tells the
//! observer what the hooks said. The loop's own events go through
//! [`fire`], which serves the completions their hooks ask for and charges
//! them to the session; tool events go through the step's gatekeeper
//! (`admit.rs`), whose completions the step serves.

use crate::calls::{CallOutcome, PendingCall, arguments_value};
use crate::guard::Guard;
use crate::hooks::{Dispatch, PayloadBase};
use crate::serve::with_completions;
use crate::session_journal::Entry;
use crate::turn::{Ending, Turn};
use kaizen_hooks::{HookCall, HookEvent};
use kaizen_llm::Usage;
use kaizen_protocol::{Event, Observer, Status};
use serde_json::{Value, json};

/// A point of a session where hooks are handed it, with what they see.
pub(crate) enum HookPoint<'a> {
    /// A run starts (`source`: `startup` or `resume`).
    SessionStart { source: &'a str, model: &'a str },
    /// A user's message is about to join the conversation.
    UserPromptSubmit { prompt: &'a str },
    /// Before model call `cycle`.
    PreThink {
        cycle: u32,
        model: &'a str,
        message_count: usize,
    },
    /// After model call `cycle`, before its tool calls run.
    PostThink {
        cycle: u32,
        text: &'a str,
        calls: &'a [PendingCall],
    },
    /// The model is done; `continued` once a hook sent it back to work.
    Stop { continued: bool, last: &'a str },
    /// A sub-agent of type `kind` is done.
    SubagentStop {
        kind: &'a str,
        continued: bool,
        last: &'a str,
    },
    /// A sub-agent of type `kind` starts.
    SubagentStart {
        kind: &'a str,
        prompt: &'a str,
        description: &'a str,
    },
    /// The conversation is about to be compacted.
    PreCompact {
        trigger: &'a str,
        tokens: u64,
        window: u64,
    },
    /// A checkpoint is about to be handed over.
    PreCheckpoint { cycle: u32, reason: &'a str },
    /// A checkpoint was written.
    PostCheckpoint { cycle: u32, reason: &'a str },
    /// The run was interrupted.
    Interrupt { reason: Option<&'a str> },
    /// The run ended.
    SessionEnd {
        status: Status,
        error: Option<&'a str>,
    },
    /// A tool call is about to run with `input`.
    PreToolUse {
        call: &'a PendingCall,
        input: &'a Value,
    },
    /// A tool call needs the user's approval.
    PermissionRequest {
        call: &'a PendingCall,
        input: &'a Value,
        reason: &'a str,
    },
    /// Kaizen tells the user something (`kind`: `permission_prompt`).
    Notification { kind: &'a str, message: &'a str },
    /// A tool call finished, well or not.
    PostToolUse {
        outcome: &'a CallOutcome,
        input: &'a Value,
    },
}

impl HookPoint<'_> {
    /// The event hooks subscribe to.
    pub fn event(&self) -> HookEvent {
        match self {
            Self::SessionStart { .. } => HookEvent::SessionStart,
            Self::UserPromptSubmit { .. } => HookEvent::UserPromptSubmit,
            Self::PreThink { .. } => HookEvent::PreThink,
            Self::PostThink { .. } => HookEvent::PostThink,
            Self::Stop { .. } => HookEvent::Stop,
            Self::SubagentStop { .. } => HookEvent::SubagentStop,
            Self::SubagentStart { .. } => HookEvent::SubagentStart,
            Self::PreCompact { .. } => HookEvent::PreCompact,
            Self::PreCheckpoint { .. } => HookEvent::PreCheckpoint,
            Self::PostCheckpoint { .. } => HookEvent::PostCheckpoint,
            Self::Interrupt { .. } => HookEvent::Interrupt,
            Self::SessionEnd { .. } => HookEvent::SessionEnd,
            Self::PreToolUse { .. } => HookEvent::PreToolUse,
            Self::PermissionRequest { .. } => HookEvent::PermissionRequest,
            Self::Notification { .. } => HookEvent::Notification,
            Self::PostToolUse { outcome, .. } => match outcome.result {
                Ok(_) => HookEvent::PostToolUse,
                Err(_) => HookEvent::PostToolUseFailure,
            },
        }
    }

    /// What matchers match: the tool's name for tool events, the source,
    /// trigger, reason or type for others.
    fn matched(&self) -> Option<&str> {
        match self {
            Self::SessionStart { source, .. } => Some(source),
            Self::SubagentStop { kind, .. } | Self::SubagentStart { kind, .. } => Some(kind),
            Self::PreCompact { trigger, .. } => Some(trigger),
            Self::PreCheckpoint { reason, .. } | Self::PostCheckpoint { reason, .. } => {
                Some(reason)
            }
            Self::SessionEnd { status, .. } => Some(status.as_str()),
            Self::PreToolUse { call, .. } | Self::PermissionRequest { call, .. } => {
                Some(&call.name)
            }
            Self::Notification { kind, .. } => Some(kind),
            Self::PostToolUse { outcome, .. } => Some(&outcome.call.name),
            Self::UserPromptSubmit { .. }
            | Self::PreThink { .. }
            | Self::PostThink { .. }
            | Self::Stop { .. }
            | Self::Interrupt { .. } => None,
        }
    }

    /// The payload's fields of this event, after those every payload
    /// carries.
    fn fields(&self) -> Value {
        match self {
            Self::SessionStart { source, model } => json!({"source": source, "model": model}),
            Self::UserPromptSubmit { prompt } => json!({"prompt": prompt}),
            Self::PreThink {
                cycle,
                model,
                message_count,
            } => json!({"cycle": cycle, "model": model, "message_count": message_count}),
            Self::PostThink { cycle, text, calls } => {
                let planned: Vec<_> = calls
                    .iter()
                    .map(|c| json!({"id": c.id, "name": c.name, "input": arguments_value(&c.arguments)}))
                    .collect();
                json!({"cycle": cycle, "text": text, "tool_calls": planned})
            }
            Self::Stop { continued, last }
            | Self::SubagentStop {
                continued, last, ..
            } => {
                json!({"stop_hook_active": continued, "last_assistant_message": last})
            }
            Self::SubagentStart {
                prompt,
                description,
                ..
            } => json!({"prompt": prompt, "description": description}),
            Self::PreCompact {
                trigger,
                tokens,
                window,
            } => {
                json!({"trigger": trigger, "custom_instructions": null, "tokens": tokens, "window": window})
            }
            Self::PreCheckpoint { cycle, reason } | Self::PostCheckpoint { cycle, reason } => {
                json!({"cycle": cycle, "reason": reason})
            }
            Self::Interrupt { reason } => json!({"reason": reason}),
            Self::SessionEnd { status, error } => {
                json!({"reason": status.as_str(), "error": error})
            }
            Self::PreToolUse { call, input } => {
                json!({"tool_name": call.name, "tool_input": input, "tool_use_id": call.id})
            }
            Self::PermissionRequest {
                call,
                input,
                reason,
            } => json!({
                "tool_name": call.name, "tool_input": input, "tool_use_id": call.id,
                "reason": reason,
            }),
            Self::Notification { kind, message } => {
                json!({"message": message, "notification_type": kind})
            }
            Self::PostToolUse { outcome, input } => tool_result_fields(outcome, input),
        }
    }
}

/// The fields of `PostToolUse` (or `PostToolUseFailure`).
fn tool_result_fields(outcome: &CallOutcome, input: &Value) -> Value {
    let (name, id) = (&outcome.call.name, &outcome.call.id);
    match &outcome.result {
        Ok(output) => json!({
            "tool_name": name, "tool_input": input, "tool_use_id": id,
            "tool_response": {"content": output.joined_text(), "metadata": output.metadata},
        }),
        Err(error) => json!({
            "tool_name": name, "tool_input": input, "tool_use_id": id,
            "error": error.message, "error_kind": error.kind, "is_interrupt": false,
            "denied": outcome.denied,
        }),
    }
}

/// Runs the hooks of `point` (when any wants its event; else the payload
/// is never built) and tells `observer` what they said: the one way an
/// event reaches hooks.
pub(crate) async fn dispatch(
    guard: &Guard,
    observer: &dyn Observer,
    base: &PayloadBase,
    point: HookPoint<'_>,
    call: &HookCall,
) -> Dispatch {
    let event = point.event();
    let hooks = &guard.hooks;
    if !hooks.wants(event) {
        return Dispatch::default();
    }
    let payload = base.payload(event, point.fields());
    let dispatch = hooks.dispatch(event, point.matched(), payload, call).await;
    report(observer, event, &dispatch);
    dispatch
}

/// Fires one of the loop's own events (not a tool call's): runs its hooks
/// (when any wants it), serving the completions they ask for; what those
/// spent joins the session (`Entry::Hooks`) and, in a sub-agent, its
/// parent's step.
pub(crate) async fn fire(turn: &mut Turn<'_>, point: HookPoint<'_>) -> Dispatch {
    let event = point.event();
    // Most events have no hook: nothing to serve, nothing allocated.
    if !turn.guard.hooks.wants(event) {
        return Dispatch::default();
    }
    let shared = &*turn;
    let (dispatch, usage, cost_usd) = with_completions(shared, |completions| async move {
        let call = HookCall { completions };
        dispatch(shared.guard, shared.observer, &shared.base, point, &call).await
    })
    .await;
    if cost_usd > 0.0 || usage != Usage::default() {
        if let Some(parent) = &turn.scope.tally {
            parent.add(&usage, cost_usd);
        }
        let event = event.name().to_string();
        turn.commit(Entry::Hooks {
            event,
            usage,
            cost_usd,
        });
    }
    dispatch
}

/// Tells `observer` what an event's hooks said.
fn report(observer: &dyn Observer, event: HookEvent, dispatch: &Dispatch) {
    for report in &dispatch.reports {
        observer.on_event(&Event::Hook {
            event: event.name().to_string(),
            hook: report.hook.clone(),
            outcome: report.outcome.clone(),
            reason: report.reason.clone(),
        });
    }
    for text in &dispatch.messages {
        observer.on_event(&Event::Notice {
            source: dispatch
                .decided_by
                .clone()
                .unwrap_or_else(|| format!("{event} hook")),
            text: text.clone(),
        });
    }
}

/// The ending of a run a hook stopped.
pub(crate) fn stopped_by(hook: &Option<String>, reason: &str) -> Ending {
    let by = hook.as_deref().unwrap_or("a hook");
    (
        Status::Stopped,
        Some(format!("the hook {by} stopped the session: {reason}")),
    )
}
