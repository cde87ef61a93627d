//! Compaction: when the next request would fill too much of the model's
//! context window, the older part of the conversation is replaced, first
//! by the same messages with their long tool results elided, and when that
//! is not enough by a summary the `compaction` model role writes. The
//! recent turns stay verbatim. `PreCompact` hooks may add instructions for
//! the summary or keep the conversation whole. A compaction is a journal
//! entry, so a resumed or forked session sees what the model saw, and the
//! log keeps everything it replaced.

use crate::agent::{Agent, Ending};
use crate::bounded::bounded;
use crate::context::{self, ContextMeter, Plan, request_tokens};
use crate::hook_points::{HookSite, stopped_by};
use crate::journal::Entry;
use crate::state::SessionState;
use crate::sub_agent::Scope;
use kaizen_hooks::{HookAction, HookEvent};
use kaizen_llm::{Block, Message, Request, Role, StreamEvent, ToolDefinition, Usage, tokens};
use kaizen_protocol::{Event, StepKey, StepKind};
use serde_json::json;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the summariser is asked.
const SUMMARY_SYSTEM: &str = "You compact the conversation of an AI agent that works on a task \
with tools, so that it can go on within its context window. Write the summary it will read \
instead of the conversation you are given. Keep: the user's requirements; the decisions made \
and why; the files read, created or changed (paths) and what changed; the commands run and \
their key results; errors met and whether they were resolved; open todo items; what was \
being done last and what comes next. Be specific (names, paths, numbers, exact error \
messages); no preamble.";

/// Opens a summary message; the task follows it.
const COMPACTED: &str = "[kaizen compacted this session's conversation to stay within the \
model's context window. The task, as first given:]";
/// Follows the task in a summary message.
const SUMMARY_OF: &str = "[A summary of the earlier conversation:]";
/// Closes a summary message.
const GOES_ON: &str = "[The conversation goes on from here; the session's log keeps it whole.]";

/// Bytes of the task a summary message repeats verbatim.
const TASK_BYTES: usize = 8_000;
/// Output tokens a summary may take.
const SUMMARY_TOKENS: u32 = 4_096;

/// What replaces the older messages: a summary, or the same messages with
/// their long results elided.
struct Compacted {
    head: Vec<Message>,
    summarized: bool,
    usage: Usage,
    cost_usd: f64,
    /// The model that summarised.
    model: Option<String>,
}

impl Compacted {
    /// The older messages, their long results elided.
    fn elided(plan: Plan) -> Self {
        Self {
            head: plan.elided,
            summarized: false,
            usage: Usage::default(),
            cost_usd: 0.0,
            model: None,
        }
    }
}

impl Agent<'_> {
    /// Compacts the conversation when the next request would be over the
    /// policy's limit (`trigger`: `auto`), or when the inbox asks
    /// (`manual`); a hook that stops the session,
    /// the time limit or an interrupt during the summary ends the run.
    pub(crate) async fn maybe_compact(
        &self,
        state: &mut SessionState,
        site: HookSite<'_>,
        system: &str,
        tools: &[ToolDefinition],
        meter: &mut ContextMeter,
    ) -> Result<(), Ending> {
        let policy = &self.config.context;
        let model = self.config.model.as_str();
        let asked = self
            .config
            .inbox
            .as_ref()
            .is_some_and(|inbox| inbox.take_compaction());
        if !asked && policy.window == 0 {
            return Ok(());
        }
        let limit = policy.limit();
        let mut estimate = meter.estimate(model, system, tools, &state.messages);
        if !asked {
            // Near the limit the count decides: make it exact where it can be.
            if estimate >= limit / 2 && tokens::has_tokenizer(model) && !tokens::tokenizer_loaded()
            {
                let _ = tokio::task::spawn_blocking(tokens::load_tokenizer).await;
                meter.reset();
                estimate = meter.estimate(model, system, tools, &state.messages);
            }
            if estimate <= limit {
                return Ok(());
            }
        }
        let trigger = if asked { "manual" } else { "auto" };
        self.compact(state, site, system, tools, (trigger, estimate))
            .await?;
        meter.reset();
        Ok(())
    }

    /// Compacts `state`'s conversation now, whatever its size (`kaizen
    /// sessions compact`): summarised, as the run would see it next. The
    /// compaction's event, or `None` when nothing was compacted (a hook
    /// kept it whole, one turn only, the summary failed: a notice says).
    pub async fn compact_now(
        &self,
        state: &mut SessionState,
        interrupt: &CancellationToken,
    ) -> Result<Option<Event>, String> {
        let scope = Scope::outermost(self.config.timeout.map(|limit| Instant::now() + limit));
        let base = self.payload_base(state, &scope);
        let site = HookSite {
            base: &base,
            scope: &scope,
            interrupt,
        };
        let system = self.system_prompt();
        let tools = self.tool_definitions();
        let model = self.config.model.as_str();
        let estimate = request_tokens(model, &system, &tools, &state.messages);
        let compacted = self
            .compact(state, site, &system, &tools, ("manual", estimate))
            .await
            .map_err(|(_, why)| why.unwrap_or_else(|| "the compaction was cut off".into()))?;
        if let Some(journal) = &self.journal {
            journal.flush();
        }
        Ok(compacted)
    }

    /// Compacts the conversation now: the `PreCompact` hooks, then the
    /// elided or summarised head (a manual compaction always summarises);
    /// journaled, and reported by the event it returns.
    async fn compact(
        &self,
        state: &mut SessionState,
        site: HookSite<'_>,
        system: &str,
        tools: &[ToolDefinition],
        (trigger, estimate): (&str, u64),
    ) -> Result<Option<Event>, Ending> {
        let policy = &self.config.context;
        let model = self.config.model.as_str();
        let fields = json!({"trigger": trigger, "custom_instructions": null, "tokens": estimate, "window": policy.window});
        let hooks = self
            .hook(state, site, HookEvent::PreCompact, Some(trigger), fields)
            .await;
        match &hooks.action {
            HookAction::Stop(reason) => return Err(stopped_by(&hooks.decided_by, reason)),
            HookAction::Deny(reason) => {
                let by = hooks.decided_by.as_deref().unwrap_or("a hook");
                self.notice(format!(
                    "the PreCompact hook {by} kept the conversation whole: {reason}"
                ));
                return Ok(None);
            }
            _ => {}
        }
        let keep = (policy.keep_recent * policy.window as f64) as u64;
        let Some(plan) = context::plan(model, &state.messages, keep, policy.elide_over) else {
            self.notice(format!(
                "the conversation is near the model's window ({estimate} of {} tokens) but holds nothing older than the last turn to compact",
                policy.window
            ));
            return Ok(None);
        };
        let replaced = plan.cut;
        let elide_only = trigger != "manual" && self.elided_enough(state, system, tools, &plan);
        let compacted = match elide_only {
            true => Some(Compacted::elided(plan)),
            false => {
                let instructions = hooks.context();
                match self.summarize(state, site, &plan, instructions).await? {
                    Ok(compacted) => Some(compacted),
                    Err(why) => {
                        self.notice(format!(
                            "compacting the conversation failed ({why}); it goes on {}",
                            if plan.elisions > 0 {
                                "with long results elided"
                            } else {
                                "whole"
                            }
                        ));
                        (plan.elisions > 0).then(|| Compacted::elided(plan))
                    }
                }
            }
        };
        let Some(compacted) = compacted else {
            return Ok(None);
        };
        let (summarized, cost_usd) = (compacted.summarized, compacted.cost_usd);
        let entry = Entry::Compaction {
            head: compacted.head,
            kept_from: replaced,
            summarized,
            usage: compacted.usage,
            cost_usd,
        };
        self.commit(state, entry);
        let after = request_tokens(model, system, tools, &state.messages);
        let event = Event::Compaction {
            trigger: trigger.to_string(),
            tokens_before: estimate,
            tokens_after: after,
            window: policy.window,
            replaced,
            summarized,
            model: compacted.model,
            cost_usd,
        };
        self.observer.on_event(&event);
        Ok(Some(event))
    }

    /// Whether eliding the older results alone brings the next request
    /// under the limit.
    fn elided_enough(
        &self,
        state: &SessionState,
        system: &str,
        tools: &[ToolDefinition],
        plan: &Plan,
    ) -> bool {
        if plan.elisions == 0 {
            return false;
        }
        let model = self.config.model.as_str();
        let head = request_tokens(model, system, tools, &plan.elided);
        let tail = context::message_tokens(model, &state.messages[plan.cut..]);
        head + tail <= self.config.context.limit()
    }

    /// The summary of `plan`'s messages by the `compaction` role's model,
    /// charged to the run; `Err(Ending)` when the run must end (time,
    /// interrupt), `Ok(Err(why))` when the summary failed.
    async fn summarize(
        &self,
        state: &SessionState,
        site: HookSite<'_>,
        plan: &Plan,
        instructions: Option<String>,
    ) -> Result<Result<Compacted, String>, Ending> {
        let scope = site.scope;
        let spent = scope.spent.cost();
        if spent >= self.config.budget_usd {
            return Ok(Err(format!(
                "the run spent ${spent:.4} of its ${:.4} budget",
                self.config.budget_usd
            )));
        }
        let model = self
            .config
            .models
            .model_for("compaction", &self.config.model)
            .to_string();
        let mut system = SUMMARY_SYSTEM.to_string();
        if let Some(instructions) = instructions {
            system.push_str(&format!("\n\nAlso: {instructions}"));
        }
        let budget = (self.config.context.window as usize).saturating_mul(2);
        let todos = serde_json::to_string(&state.todos).unwrap_or_default();
        let prompt = format!(
            "The conversation so far:\n\n{}\n\nThe todo list: {todos}\n\nWrite the summary.",
            render(&plan.elided, budget)
        );
        let request = Request {
            model,
            system,
            messages: vec![text_message(prompt)],
            tools: Vec::new(),
            max_tokens: self.config.max_tokens.min(SUMMARY_TOKENS),
            temperature: None,
        };
        let sink = |event: StreamEvent| {
            if let StreamEvent::FallingBack { from, to, error } = event {
                self.observer.on_event(&Event::Fallback { from, to, error });
            }
        };
        // A step of its own, before the cycle's model call: an engine that
        // journals steps hands the summary back rather than paying again.
        let key = StepKey {
            session: state.session_id.clone(),
            cycle: state.cycles + 1,
            kind: StepKind::Model,
            id: "compaction".to_string(),
        };
        let single = self.provider.complete(&request, &sink);
        let call = self
            .config
            .steps
            .model(key, Box::pin(async move { vec![single.await] }));
        let response = match bounded(call, scope.deadline, site.interrupt).await {
            Ok(mut answers) => match answers.pop() {
                Some(Ok(response)) => response,
                Some(Err(err)) => return Ok(Err(err.message)),
                None => return Ok(Err("the summary call returned nothing".into())),
            },
            Err(cut) => return Err(self.cut_ending(cut, "compacting the conversation")),
        };
        let cost = (self.pricing)(&response.model, &response.usage);
        scope.charge(&response.usage, cost);
        let summary = response.text();
        if summary.trim().is_empty() {
            return Ok(Err("the summary came back empty".into()));
        }
        let task = task_of(&state.messages);
        let task = context::head(&task, TASK_BYTES);
        let text = format!("{COMPACTED}\n{task}\n\n{SUMMARY_OF}\n{summary}\n\n{GOES_ON}");
        Ok(Ok(Compacted {
            head: vec![text_message(text)],
            summarized: true,
            usage: response.usage,
            cost_usd: cost,
            model: Some(response.model),
        }))
    }

    fn notice(&self, text: String) {
        self.observer.on_event(&Event::Notice {
            source: "compaction".into(),
            text,
        });
    }
}

fn text_message(text: String) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::Text { text }],
    }
}

/// The task as first given: the first user message's text, or, after an
/// earlier compaction, the task that compaction's summary repeats.
pub(crate) fn task_of(messages: &[Message]) -> String {
    let first = messages
        .iter()
        .find(|message| message.role == Role::User)
        .map(Message::text)
        .unwrap_or_default();
    let task = first
        .strip_prefix(COMPACTED)
        .and_then(|rest| rest.split_once(SUMMARY_OF))
        .map_or(first.as_str(), |(task, _)| task.trim());
    task.to_string()
}

/// The messages as text for the summariser, at most about `budget` bytes:
/// the start and the end when they are longer.
fn render(messages: &[Message], budget: usize) -> String {
    let mut out = String::new();
    for message in messages {
        out.push_str(match message.role {
            Role::User => "\n[user]\n",
            Role::Assistant => "\n[assistant]\n",
        });
        for block in &message.content {
            render_block(block, &mut out);
        }
    }
    if out.len() <= budget {
        return out;
    }
    let start = context::head(&out, budget / 4);
    let mut from = out.len() - (budget - start.len());
    while !out.is_char_boundary(from) {
        from += 1;
    }
    format!(
        "{start}\n[… {} bytes left out …]\n{}",
        from - start.len(),
        &out[from..]
    )
}

fn render_block(block: &Block, out: &mut String) {
    match block {
        Block::Text { text } => {
            out.push_str(text);
            out.push('\n');
        }
        Block::ToolUse {
            name, arguments, ..
        } => out.push_str(&format!("→ {name} {arguments}\n")),
        Block::ToolResult {
            content, is_error, ..
        } => {
            out.push_str(if *is_error {
                "← error:\n"
            } else {
                "← result:\n"
            });
            for block in content {
                render_block(block, out);
            }
        }
        Block::Image { media_type, .. } => out.push_str(&format!("[an image, {media_type}]\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> Message {
        text_message(text.to_string())
    }

    #[test]
    fn the_task_survives_compactions() {
        assert_eq!(task_of(&[said("Fix the bug.")]), "Fix the bug.");
        let summary = format!("{COMPACTED}\nFix the bug.\n\n{SUMMARY_OF}\nDid X.\n\n{GOES_ON}");
        assert_eq!(task_of(&[said(&summary)]), "Fix the bug.");
        assert_eq!(task_of(&[]), "");
    }

    #[test]
    fn renders_bounded_keeping_start_and_end() {
        let messages: Vec<Message> = (0..100).map(|i| said(&format!("message {i:03}"))).collect();
        let whole = render(&messages, 1_000_000);
        assert!(whole.contains("message 000") && whole.contains("message 099"));
        let cut = render(&messages, 400);
        assert!(cut.len() < 500, "{}", cut.len());
        assert!(cut.contains("message 000") && cut.contains("message 099"));
        assert!(cut.contains("bytes left out"));
    }
}
