//! The points of a run where the loop hands the session to its hooks,
//! outside the tool calls (those are `admit.rs`'s): the opening
//! (`SessionStart`, `UserPromptSubmit`), the end of the model's work
//! (`Stop`, `SubagentStop`), and what every payload carries.

use crate::admit::run_hooks;
use crate::agent::{Agent, Ending};
use crate::hooks::{Dispatch, PayloadBase};
use crate::journal::{Entry, opening_message};
use crate::state::SessionState;
use crate::sub_agent::Scope;
use kaizen_hooks::{HookAction, HookCall, HookEvent};
use kaizen_llm::{Block, Message, Role, Usage};
use kaizen_protocol::{Event, Status};
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use tokio_util::sync::CancellationToken;

/// Where a run hands the session to its hooks: what every payload
/// carries, and the run's scope and interrupt, under which the completions
/// its hook plugins ask for are served.
#[derive(Clone, Copy)]
pub(crate) struct HookSite<'a> {
    /// What every payload carries.
    pub base: &'a PayloadBase,
    /// The run's deadline, budget and spending.
    pub scope: &'a Scope,
    /// The run's interrupt.
    pub interrupt: &'a CancellationToken,
}

impl Agent<'_> {
    /// The run's opening: `SessionStart` hooks (their context joins the
    /// system prompt), then the user's message through `UserPromptSubmit`
    /// hooks (which may refuse it or add to it).
    pub(crate) async fn open(
        &self,
        state: &mut SessionState,
        task: Option<&str>,
        site: HookSite<'_>,
        system: &mut String,
        resumed: bool,
    ) -> Result<(), Ending> {
        if site.base.agent.is_none() {
            let source = if resumed { "resume" } else { "startup" };
            let fields = json!({"source": source, "model": self.config.model});
            let hooks = self
                .hook(state, site, HookEvent::SessionStart, Some(source), fields)
                .await;
            if let HookAction::Stop(reason) = &hooks.action {
                return Err(stopped_by(&hooks.decided_by, reason));
            }
            if let Some(context) = hooks.context() {
                system.push_str(&format!("\n<hook-context>\n{context}\n</hook-context>\n"));
            }
        }
        let Some(mut message) = opening_message(state, task) else {
            return Ok(());
        };
        if let Some(task) = task {
            let fields = json!({"prompt": task});
            let hooks = self
                .hook(state, site, HookEvent::UserPromptSubmit, None, fields)
                .await;
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
        self.commit(state, Entry::User { message });
        Ok(())
    }

    /// Takes the messages sent while the run worked into the conversation,
    /// each through the `UserPromptSubmit` hooks (a refused one is dropped,
    /// and said so); a hook that stops the session ends the run.
    pub(crate) async fn take_inbox(
        &self,
        state: &mut SessionState,
        site: HookSite<'_>,
    ) -> Result<(), Ending> {
        let Some(inbox) = &self.config.inbox else {
            return Ok(());
        };
        for text in inbox.take_all() {
            let fields = json!({"prompt": text});
            let hooks = self
                .hook(state, site, HookEvent::UserPromptSubmit, None, fields)
                .await;
            match &hooks.action {
                HookAction::Stop(reason) => return Err(stopped_by(&hooks.decided_by, reason)),
                HookAction::Deny(reason) => {
                    let by = hooks.decided_by.as_deref().unwrap_or("a hook");
                    self.observer.on_event(&Event::Notice {
                        source: "UserPromptSubmit hooks".into(),
                        text: format!("a message was refused by the hook {by}: {reason}"),
                    });
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
            self.commit(state, Entry::User { message });
            self.observer.on_event(&Event::UserMessage {
                cycle: state.cycles + 1,
                text,
            });
        }
        Ok(())
    }

    /// Asks the Stop (or, in a sub-agent, SubagentStop) hooks whether the
    /// run may end. `Err(None)`: a hook sent the model back to work (its
    /// reason is now the next user message); `Err(Some(..))`: a hook
    /// stopped the session.
    pub(crate) async fn may_stop(
        &self,
        state: &mut SessionState,
        site: HookSite<'_>,
        last: &str,
        continuations: u32,
    ) -> Result<(), Option<Ending>> {
        let base = site.base;
        let event = if base.agent.is_some() {
            HookEvent::SubagentStop
        } else {
            HookEvent::Stop
        };
        let fields = json!({"stop_hook_active": continuations > 0, "last_assistant_message": last});
        let value = base.agent.as_ref().map(|(_, kind)| kind.as_str());
        let hooks = self.hook(state, site, event, value, fields).await;
        match &hooks.action {
            HookAction::Stop(reason) => Err(Some(stopped_by(&hooks.decided_by, reason))),
            HookAction::Deny(reason) if continuations < self.guard.max_stop_continuations => {
                let by = hooks.decided_by.as_deref().unwrap_or("a hook");
                let text =
                    format!("A {event} hook ({by}) did not let the session end yet:\n{reason}");
                let message = Message {
                    role: Role::User,
                    content: vec![Block::Text { text }],
                };
                self.commit(state, Entry::User { message });
                Err(None)
            }
            HookAction::Deny(_) => {
                self.observer.on_event(&Event::Notice {
                    source: format!("{event} hooks"),
                    text: format!(
                        "{event} hooks kept the session going {continuations} times in a row; it ends now"
                    ),
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Runs the hooks of `event` (when any wants it) and reports them,
    /// serving the completions they ask for; what those spent joins the
    /// session (`Entry::Hooks`) and, in a sub-agent, its parent's step.
    pub(crate) async fn hook(
        &self,
        state: &mut SessionState,
        site: HookSite<'_>,
        event: HookEvent,
        value: Option<&str>,
        fields: serde_json::Value,
    ) -> Dispatch {
        // Most events have no hook: nothing to serve, nothing allocated.
        if !self.guard.hooks.wants(event) {
            return Dispatch::default();
        }
        self.serve_hooks(state, site, (event, value), fields).await
    }

    /// [`Self::hook`] for an event some hook wants. Boxed because a
    /// sub-agent's run, which a step serves, runs hooks.
    fn serve_hooks<'s>(
        &'s self,
        state: &'s mut SessionState,
        site: HookSite<'s>,
        (event, value): (HookEvent, Option<&'s str>),
        fields: serde_json::Value,
    ) -> Pin<Box<dyn Future<Output = Dispatch> + Send + 's>> {
        Box::pin(async move {
            let run = |completions| {
                let call = HookCall { completions };
                async move {
                    run_hooks(
                        &self.guard,
                        self.observer,
                        site.base,
                        (event, value),
                        fields,
                        &call,
                    )
                    .await
                }
            };
            let (dispatch, usage, cost_usd) = self
                .with_completions(state, site.scope, site.interrupt, run)
                .await;
            if cost_usd > 0.0 || usage != Usage::default() {
                if let Some(parent) = &site.scope.tally {
                    parent.add(&usage, cost_usd);
                }
                let event = event.name().to_string();
                self.commit(
                    state,
                    Entry::Hooks {
                        event,
                        usage,
                        cost_usd,
                    },
                );
            }
            dispatch
        })
    }

    /// What every hook payload of this run carries.
    pub(crate) fn payload_base(&self, state: &SessionState, scope: &Scope) -> PayloadBase {
        PayloadBase {
            session_id: state.session_id.clone(),
            transcript_path: self
                .config
                .transcript_path
                .as_ref()
                .map(|path| path.display().to_string()),
            cwd: self.config.workspace.display().to_string(),
            permission_mode: self.guard.permissions.mode().as_str(),
            agent: scope.agent.clone(),
        }
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
