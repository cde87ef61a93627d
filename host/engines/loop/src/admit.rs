//! One tool call's way through the guard: the rules and the mode, then
//! `PreToolUse` hooks, then the user when it is still an ask; and after
//! the tool ran, `PostToolUse` (or `PostToolUseFailure`) hooks. The hooks
//! fire through `hook_points.rs`, with the step's completion link.

use crate::calls::{CallOutcome, PendingCall};
use crate::guard::Guard;
use crate::hook_points::{HookPoint, dispatch};
use crate::hooks::{Dispatch, PayloadBase};
use crate::scope::Scope;
use crate::step_executor::StepExecutor;
use crate::turn::effective_mode;
use kaizen_hooks::{HookAction, HookCall};
use kaizen_permissions::{Effect, Grounds, Rule, RuleOrigin, Verdict, always_rule, facts_of};
use kaizen_protocol::{Approval, ApprovalRequest, Approver, Event, Observer};
use kaizen_tools::{CallContext, ContentPart, Tool, ToolError, ToolErrorKind, ToolRegistry};
use serde_json::Value;
use std::sync::Mutex;

/// The tools that load skills (Claude Code's `Skill` and its older
/// `SlashCommand`): never narrowed by the active skill.
const SKILL_TOOLS: &[&str] = &["Skill", "SlashCommand"];

/// Where a call stands once the guard has decided.
pub(crate) enum Admission {
    /// Run it with this input (a hook may have rewritten it); the context
    /// hooks added goes to the model with the result.
    Run { input: Value, context: Vec<String> },
    /// Do not run it; the error is its result. `denied` marks a refusal by
    /// a rule, the mode, a hook or the user (not a malformed call).
    Refused {
        error: ToolError,
        denied: bool,
        context: Vec<String>,
    },
}

/// What one step's calls share on their way through the guard.
pub(crate) struct Gatekeeper<'a> {
    pub registry: &'a ToolRegistry,
    pub ctx: &'a CallContext,
    pub guard: &'a Guard,
    pub observer: &'a dyn Observer,
    pub base: &'a PayloadBase,
    /// Who is asked instead of the guard's approver (an MCP client, by
    /// elicitation).
    pub approver: Option<&'a dyn Approver>,
    /// Set once a hook stops the session: the hook and its reason. Calls
    /// not yet admitted are then refused.
    pub stopped: Mutex<Option<String>>,
    /// How the calls run, and the model call they answer (their steps'
    /// cycle).
    pub steps: &'a dyn StepExecutor,
    pub cycle: u32,
    /// The step's spending, by call (none outside a run).
    pub scope: Option<&'a Scope>,
}

impl Gatekeeper<'_> {
    /// Why the session stops, once a hook said so.
    pub fn stop_reason(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn stop(&self, dispatch: &Dispatch, reason: &str) {
        let by = dispatch.decided_by.as_deref().unwrap_or("a hook");
        let mut stopped = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        stopped.get_or_insert_with(|| format!("the hook {by} stopped the session: {reason}"));
    }

    /// Fires a tool event's hooks, whose completions the step serves.
    async fn fire(&self, point: HookPoint<'_>) -> Dispatch {
        let call = HookCall {
            completions: self.ctx.completions.clone(),
        };
        dispatch(self.guard, self.observer, self.base, point, &call).await
    }

    /// Refuses a call that the active skill's `allowed-tools` do not
    /// cover (see `kaizen_tools::ActiveSkill`). Loading another skill is
    /// always allowed: it changes which skill is active.
    fn narrowed(&self, name: &str, tool: &dyn Tool, input: &Value) -> Option<ToolError> {
        let skill = self.ctx.notes.active_skill()?;
        if skill.allowed.is_empty() || SKILL_TOOLS.contains(&name) {
            return None;
        }
        let cwd = &self.ctx.cwd;
        let facts = facts_of(tool, input, cwd);
        let origin = RuleOrigin {
            label: format!("the skill {}", skill.name),
            base: self.ctx.workspace.clone(),
        };
        let home = std::env::home_dir().unwrap_or_default();
        let covered = skill.allowed.iter().any(|text| {
            Rule::parse(Effect::Allow, text, origin.clone(), &home)
                .is_ok_and(|rule| rule.matches(&facts))
        });
        (!covered).then(|| {
            ToolError::new(
                ToolErrorKind::PermissionDenied,
                format!(
                    "{name} was not run: the skill `{}` allows only {} (its allowed-tools); do \
                     its task with those, or load another skill",
                    skill.name,
                    skill.allowed.join(", ")
                ),
            )
        })
    }

    /// Decides `call`.
    pub async fn admit(&self, call: &PendingCall) -> Admission {
        let refused = |error, denied, context| Admission::Refused {
            error,
            denied,
            context,
        };
        if let Some(reason) = self.stop_reason() {
            let error = ToolError::new(
                ToolErrorKind::PermissionDenied,
                format!("{} was not run: {reason}", call.name),
            );
            return refused(error, true, Vec::new());
        }
        let (tool, mut input) = match self.registry.prepare(&call.name, &call.arguments) {
            Ok((tool, input)) => (tool.clone(), input),
            Err(error) => return refused(error, false, Vec::new()),
        };
        let name = call.name.as_str();
        let cwd = &self.ctx.cwd;
        let mode = effective_mode(self.guard, self.base.mode_limit);
        let mut verdict = self
            .guard
            .permissions
            .evaluate_in(mode, tool.as_ref(), &input, cwd);
        if let Verdict::Deny(grounds) = &verdict {
            return refused(self.deny(call, &input, grounds), true, Vec::new());
        }
        if let Some(error) = self.narrowed(name, tool.as_ref(), &input) {
            return refused(error, true, Vec::new());
        }
        let hooks = self
            .fire(HookPoint::PreToolUse {
                call,
                input: &input,
            })
            .await;
        let context = hooks.contexts.clone();
        if let Some(updated) = hooks.updated_input.clone() {
            let by = hooks.decided_by.as_deref().unwrap_or("a PreToolUse hook");
            let who = format!("A hook ({by}) rewrote");
            match self.rewritten(call, tool.as_ref(), &updated, &who) {
                Ok(judged) => verdict = judged,
                Err((error, denied)) => return refused(error, denied, context),
            }
            input = updated;
        }
        let hook_grounds = |reason: &str| Grounds {
            by: "hook",
            source: hooks.decided_by.clone().unwrap_or_default(),
            reason: reason.to_string(),
            explicit: true,
        };
        match &hooks.action {
            HookAction::Stop(reason) => {
                self.stop(&hooks, reason);
                let grounds = hook_grounds(&format!("the session was stopped: {reason}"));
                return refused(self.deny(call, &input, &grounds), true, context);
            }
            HookAction::Deny(reason) => {
                let grounds = hook_grounds(&format!("{name} was blocked by a hook: {reason}"));
                return refused(self.deny(call, &input, &grounds), true, context);
            }
            HookAction::Ask(reason) => verdict = Verdict::Ask(hook_grounds(reason)),
            HookAction::Allow => {
                if matches!(&verdict, Verdict::Ask(grounds) if !grounds.explicit) {
                    verdict = Verdict::Allow(hook_grounds("allowed by a hook"));
                }
            }
            HookAction::Continue => {}
        }
        match verdict {
            Verdict::Ask(grounds) => match self.ask(call, tool.as_ref(), &input, grounds).await {
                Err(error) => return refused(error, true, context),
                Ok(None) => {}
                Ok(Some(edited)) => {
                    let who = "The approver edited";
                    if let Err((error, denied)) = self.rewritten(call, tool.as_ref(), &edited, who)
                    {
                        return refused(error, denied, context);
                    }
                    let grounds = Grounds {
                        by: "user",
                        source: "the user".into(),
                        reason: "approved with an edited input".into(),
                        explicit: true,
                    };
                    self.decided(call, "allow", &grounds);
                    input = edited;
                }
            },
            // Every decision is reported, the plain ones too.
            Verdict::Allow(grounds) => self.decided(call, "allow", &grounds),
            Verdict::Deny(grounds) => {
                return refused(self.deny(call, &input, &grounds), true, context);
            }
        }
        Admission::Run { input, context }
    }

    /// The verdict on a rewrite of `call`'s input (`who` did it: "A hook
    /// (…) rewrote", "The approver edited"), judged as the model's input
    /// was: it must fit the tool's schema (else an error that is not a
    /// refusal), and the rules judge what will run (a deny is a refusal,
    /// with whether it is one).
    fn rewritten(
        &self,
        call: &PendingCall,
        tool: &dyn Tool,
        rewrite: &Value,
        who: &str,
    ) -> Result<Verdict, (ToolError, bool)> {
        let name = call.name.as_str();
        if let Err(error) = self.registry.check(name, rewrite) {
            let error = ToolError::new(
                ToolErrorKind::SchemaViolation,
                format!(
                    "{who} the input of {name} into one its schema refuses, so it did not run:\n{}",
                    error.message
                ),
            );
            return Err((error, false));
        }
        let mode = effective_mode(self.guard, self.base.mode_limit);
        match self
            .guard
            .permissions
            .evaluate_in(mode, tool, rewrite, &self.ctx.cwd)
        {
            Verdict::Deny(grounds) => Err((self.deny(call, rewrite, &grounds), true)),
            verdict => Ok(verdict),
        }
    }

    /// Resolves an ask: `PermissionRequest` hooks, then the approver.
    /// Allowed, with the input the approver edited it into, if it did.
    async fn ask(
        &self,
        call: &PendingCall,
        tool: &dyn Tool,
        input: &Value,
        grounds: Grounds,
    ) -> Result<Option<Value>, ToolError> {
        let name = call.name.as_str();
        let hooks = self
            .fire(HookPoint::PermissionRequest {
                call,
                input,
                reason: &grounds.reason,
            })
            .await;
        let by_hook = |reason: String| Grounds {
            by: "hook",
            source: hooks.decided_by.clone().unwrap_or_default(),
            reason,
            explicit: true,
        };
        match &hooks.action {
            HookAction::Allow => {
                self.decided(call, "allow", &by_hook("a hook approved it".into()));
                return Ok(None);
            }
            HookAction::Deny(reason) => {
                return Err(self.deny(
                    call,
                    input,
                    &by_hook(format!("a hook refused {name}: {reason}")),
                ));
            }
            HookAction::Stop(reason) => {
                self.stop(&hooks, reason);
                return Err(self.deny(
                    call,
                    input,
                    &by_hook(format!("the session was stopped: {reason}")),
                ));
            }
            HookAction::Ask(_) | HookAction::Continue => {}
        }
        self.ask_user(call, tool, input, grounds).await
    }

    /// Asks the approver (or refuses, naming what would allow the call,
    /// when nobody can be asked).
    async fn ask_user(
        &self,
        call: &PendingCall,
        tool: &dyn Tool,
        input: &Value,
        grounds: Grounds,
    ) -> Result<Option<Value>, ToolError> {
        let name = call.name.as_str();
        let cwd = &self.ctx.cwd;
        let always = always_rule(tool, input, cwd);
        let Some(approver) = self.approver.or(self.guard.approver.as_deref()) else {
            let reason = format!(
                "{name} needs the user's approval ({}), and nobody can be asked in this run. \
                 The user can allow it with --allowedTools '{always}' (or '{name}'), with \
                 `allow = [\"{always}\"]` under [permissions] in $KAIZEN_HOME/config.toml, or \
                 with --permission-mode bypassPermissions. Do not retry the same call.",
                grounds.reason
            );
            return Err(self.deny(call, input, &Grounds { reason, ..grounds }));
        };
        self.observer.on_event(&Event::PermissionRequest {
            id: call.id.clone(),
            name: name.to_string(),
            arguments: input.clone(),
            reason: grounds.reason.clone(),
        });
        let message = format!("Kaizen needs your permission to use {name}");
        self.fire(HookPoint::Notification {
            kind: "permission_prompt",
            message: &message,
        })
        .await;
        let request = ApprovalRequest {
            tool: name.to_string(),
            input: input.clone(),
            reason: grounds.reason.clone(),
            always_rule: always.clone(),
            danger: Some(tool.spec().danger),
            agent: self.base.agent.as_ref().map(|(_, kind)| kind.clone()),
            call_id: call.id.clone(),
        };
        let approval = approver.approve(&request).await;
        self.approved(call, input, approval, &always)
    }

    /// Applies the user's answer: an `Always` keeps its rule for the
    /// session; an edit is the input to run (judged by the caller).
    fn approved(
        &self,
        call: &PendingCall,
        input: &Value,
        approval: Approval,
        always: &str,
    ) -> Result<Option<Value>, ToolError> {
        let name = call.name.as_str();
        let user = |reason: String| Grounds {
            by: "user",
            source: "the user".into(),
            reason,
            explicit: true,
        };
        match approval {
            Approval::Once => {
                self.decided(call, "allow", &user("approved once".into()));
                Ok(None)
            }
            Approval::Edited(edited) => Ok(Some(edited)),
            Approval::Always => {
                let origin = RuleOrigin {
                    label: "your approval".into(),
                    base: self.ctx.workspace.clone(),
                };
                if let Err(err) = self
                    .guard
                    .permissions
                    .add_rule(Effect::Allow, always, origin)
                {
                    tracing::warn!("could not keep the approval as a rule: {err}");
                }
                self.decided(
                    call,
                    "allow",
                    &user(format!("approved always (`{always}`)")),
                );
                Ok(None)
            }
            Approval::Deny(message) => {
                let reason = if message.trim().is_empty() {
                    format!("The user refused to let {name} run. Ask them, or do it another way.")
                } else {
                    format!("The user refused to let {name} run: {}", message.trim())
                };
                Err(self.deny(call, input, &user(reason)))
            }
        }
    }

    /// Reports a refusal and gives the error the model sees.
    fn deny(&self, call: &PendingCall, _input: &Value, grounds: &Grounds) -> ToolError {
        self.decided(call, "deny", grounds);
        ToolError::new(ToolErrorKind::PermissionDenied, grounds.reason.clone())
    }

    fn decided(&self, call: &PendingCall, decision: &str, grounds: &Grounds) {
        self.observer.on_event(&Event::PermissionDecision {
            id: call.id.clone(),
            name: call.name.clone(),
            decision: decision.into(),
            by: grounds.by.into(),
            source: grounds.source.clone(),
            reason: grounds.reason.clone(),
        });
    }

    /// Runs `PostToolUse` (or `PostToolUseFailure`) hooks on a finished
    /// call: their context joins the result; a replacement text replaces
    /// it; a hook's refusal is told to the model beside the result.
    pub async fn after(&self, outcome: &mut CallOutcome, input: &Value) {
        let point = HookPoint::PostToolUse {
            outcome: &*outcome,
            input,
        };
        let event = point.event();
        let hooks = self.fire(point).await;
        outcome.context.extend(hooks.contexts.iter().cloned());
        if let Some(text) = hooks.updated_output.clone() {
            match &mut outcome.result {
                Ok(output) => {
                    output
                        .content
                        .retain(|part| !matches!(part, ContentPart::Text { .. }));
                    output.content.insert(0, ContentPart::Text { text });
                }
                Err(error) => error.message = text,
            }
        }
        match &hooks.action {
            HookAction::Deny(reason) => {
                let by = hooks.decided_by.as_deref().unwrap_or("a hook");
                outcome.context.push(format!("{event} hook {by}: {reason}"));
            }
            HookAction::Stop(reason) => self.stop(&hooks, reason),
            _ => {}
        }
    }
}
