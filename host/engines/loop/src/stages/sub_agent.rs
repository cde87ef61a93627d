//! SUB-AGENT: a tool call (such as `Task`) hands a task to a fresh run
//! with its own conversation and a subset of the session's tools. The
//! step that runs the call serves the request, so the sub-agent shares the
//! parent's provider, budget, deadline and interrupt; its spending counts
//! against the parent's budget as it happens, and its final message is the
//! tool's result. A sub-agent cannot start sub-agents of its own: its
//! turn has no delegate.

use crate::agent_config::AgentType;
use crate::hook_points::{HookPoint, fire};
use crate::links::SubAgentJob;
use crate::run::run;
use crate::scope::Scope;
use crate::session_journal::{Journal, ParentFiles};
use crate::state::SessionState;
use crate::turn::{Turn, payload_base};
use kaizen_hooks::HookAction;
use kaizen_protocol::{Event, Observer, PermissionMode};
use kaizen_tools::{SubAgentReport, ToolSpec};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The name Claude Code gives the tool that starts sub-agents; a
/// sub-agent is never offered it.
pub const TASK_TOOL: &str = "Task";

/// The kinds of sub-agent, by the `subagent_type` a tool names.
const KINDS: &[Kind] = &[
    Kind {
        name: "general-purpose",
        read_only: false,
        instructions: GENERAL,
    },
    Kind {
        name: "Explore",
        read_only: true,
        instructions: "You are a read-only exploration sub-agent: another agent gave you the \
            task below and will see only your final message. Search and read to answer it; you \
            cannot change files. End with a self-contained answer: the relevant paths, line \
            numbers and findings, since nobody sees your intermediate steps.",
    },
];

/// One kind of sub-agent.
struct Kind {
    name: &'static str,
    /// Offer only tools that never change anything.
    read_only: bool,
    /// Added to the system prompt.
    instructions: &'static str,
}

/// The kind a request names: built in, or one of the run's own types.
enum Chosen<'a> {
    BuiltIn(&'static Kind),
    Defined(&'a AgentType),
}

impl Chosen<'_> {
    /// The kind named `name`, among the built-in ones and `defined`.
    fn named<'a>(name: &str, defined: &'a [AgentType]) -> Result<Chosen<'a>, String> {
        if let Some(kind) = KINDS.iter().find(|kind| kind.name == name) {
            return Ok(Chosen::BuiltIn(kind));
        }
        if let Some(own) = defined.iter().find(|own| own.name == name) {
            return Ok(Chosen::Defined(own));
        }
        let known: Vec<&str> = KINDS
            .iter()
            .map(|kind| kind.name)
            .chain(defined.iter().map(|own| own.name.as_str()))
            .collect();
        Err(format!(
            "there is no sub-agent type `{name}`; use one of: {}",
            known.join(", ")
        ))
    }

    /// Whether it is offered the tool `spec`: never the one that starts
    /// sub-agents.
    fn offers(&self, spec: &ToolSpec) -> bool {
        spec.name != TASK_TOOL
            && match self {
                Chosen::BuiltIn(kind) => spec.read_only || !kind.read_only,
                Chosen::Defined(own) => own
                    .tools
                    .as_ref()
                    .is_none_or(|tools| tools.contains(&spec.name)),
            }
    }

    /// Its own permission mode, when its type has one.
    fn permission_mode(&self) -> Option<PermissionMode> {
        match self {
            Chosen::BuiltIn(_) => None,
            Chosen::Defined(own) => own.permission_mode,
        }
    }

    fn instructions(&self) -> String {
        match self {
            Chosen::BuiltIn(kind) => kind.instructions.to_string(),
            Chosen::Defined(own) => format!("{GENERAL}\n\n{}", own.instructions),
        }
    }
}

/// What every sub-agent is told first.
const GENERAL: &str = "You are a sub-agent: another agent gave you the task below and will \
    see only your final message. Do the task completely with the tools you have, then end with \
    a self-contained report of what you did and found (paths, names, numbers), since nobody \
    sees your intermediate steps.";

/// Reports a sub-agent's events as its parent's, tagged with the call.
struct Nested<'a> {
    parent: &'a dyn Observer,
    call_id: String,
}

impl Observer for Nested<'_> {
    fn on_event(&self, event: &Event) {
        self.parent.on_event(&Event::SubAgent {
            call_id: self.call_id.clone(),
            event: Box::new(event.clone()),
        });
    }
}

/// The outermost run's [`crate::turn::Delegate`]: runs the sub-agent a
/// call of `parent`'s step asked for within the step's `scope`, and
/// answers the call.
pub(crate) fn delegate<'s>(
    parent: &'s Turn<'_>,
    scope: &'s Scope,
    job: SubAgentJob,
) -> Pin<Box<dyn Future<Output = ()> + Send + 's>> {
    Box::pin(async move {
        let SubAgentJob {
            call_id,
            request,
            reply,
        } = job;
        let answer = match Chosen::named(&request.subagent_type, &parent.config.agent_types) {
            Ok(kind) => sub_agent(parent, scope, &kind, &call_id, &request).await,
            Err(err) => Err(err),
        };
        let _ = reply.send(answer);
    })
}

/// Runs one sub-agent of `kind` for call `call_id` to its end.
async fn sub_agent(
    parent: &Turn<'_>,
    scope: &Scope,
    kind: &Chosen<'_>,
    call_id: &str,
    request: &kaizen_tools::SubAgentRequest,
) -> Result<SubAgentReport, String> {
    let tools = parent.tools.subset(|spec| kind.offers(spec));
    let observer = Nested {
        parent: parent.observer,
        call_id: call_id.to_string(),
    };
    let own = parent.config;
    let mut config = own.clone();
    config.model = own
        .models
        .sub_agent_model(&request.subagent_type, &own.model)
        .to_string();
    // Messages from outside are the parent's; an embedder's own system
    // prompt is the parent's too.
    config.inbox = None;
    config.system_prompt = None;
    config.permission_mode = kind.permission_mode();
    config.instructions = Some(match &own.instructions {
        Some(instructions) => format!("{instructions}\n\n{}", kind.instructions()),
        None => kind.instructions(),
    });
    // Files it changes are kept with the parent's step.
    let journal = parent
        .step_files()
        .map(|files| Arc::new(ParentFiles(files)) as Arc<dyn Journal>);
    let mut state = SessionState::new(format!("{}/{call_id}", parent.state.session_id), &own.model);
    let scope = Scope {
        agent: Some((call_id.to_string(), request.subagent_type.clone())),
        ..scope.clone()
    };
    let mut turn = Turn {
        provider: parent.provider,
        tools: &tools,
        pricing: parent.pricing,
        observer: &observer,
        journal: journal.as_ref(),
        guard: parent.guard,
        config: &config,
        base: payload_base(&config, parent.guard, &state.session_id, &scope),
        scope,
        interrupt: parent.interrupt,
        delegate: None,
        state: &mut state,
    };
    let point = HookPoint::SubagentStart {
        kind: &request.subagent_type,
        prompt: &request.prompt,
        description: &request.description,
    };
    let hooks = fire(&mut turn, point).await;
    if let HookAction::Stop(reason) | HookAction::Deny(reason) = &hooks.action {
        let by = hooks.decided_by.as_deref().unwrap_or("a hook");
        return Err(format!(
            "the sub-agent was not started: the hook {by} refused it: {reason}"
        ));
    }
    let result = Box::pin(run(&mut turn, Some(&request.prompt))).await;
    Ok(SubAgentReport {
        output: result.output,
        status: result.status.as_str().to_string(),
        error: result.error_message,
        cycles: result.cycles_used,
        cost_usd: result.cost_usd,
        tool_calls: result.tool_calls.len() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaizen_tools::Danger;

    fn spec(name: &str, read_only: bool) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            danger: Danger::Safe,
            read_only,
        }
    }

    #[test]
    fn kinds_choose_their_tools_and_never_offer_task() {
        let defined = [AgentType {
            name: "reviewer".into(),
            description: "Reviews code".into(),
            tools: Some(vec!["Read".into(), "Grep".into(), TASK_TOOL.into()]),
            instructions: "Review it.".into(),
            permission_mode: Some(PermissionMode::Plan),
        }];
        let general = Chosen::named("general-purpose", &defined).unwrap();
        let explore = Chosen::named("Explore", &defined).unwrap();
        let reviewer = Chosen::named("reviewer", &defined).unwrap();
        assert!(general.offers(&spec("Write", false)));
        assert!(!explore.offers(&spec("Write", false)));
        assert!(explore.offers(&spec("Read", true)));
        assert!(!general.offers(&spec(TASK_TOOL, true)));
        assert!(reviewer.offers(&spec("Grep", true)));
        assert!(!reviewer.offers(&spec("Glob", true)));
        assert!(!reviewer.offers(&spec(TASK_TOOL, true)));
        assert!(reviewer.instructions().ends_with("Review it."));
        assert_eq!(reviewer.permission_mode(), Some(PermissionMode::Plan));
        assert_eq!(general.permission_mode(), None);
        let err = Chosen::named("wizard", &defined).err().unwrap();
        assert!(err.contains("general-purpose, Explore, reviewer"), "{err}");
    }
}
