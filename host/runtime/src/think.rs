//! THINK: the model calls of a step, each charged to the run's budget as
//! it returns. The conversation moves into the request and back, since
//! copying it on every call would make a long session quadratic.

use crate::agent::{Agent, Ending};
use crate::bounded::bounded;
use crate::state::SessionState;
use crate::sub_agent::Scope;
use kaizen_llm::{Request, Response, StreamEvent, ToolDefinition};
use kaizen_protocol::{Event, Status, StepKey, StepKind};
use tokio_util::sync::CancellationToken;

impl Agent<'_> {
    /// One model call, streamed to the observer; the response and its
    /// price.
    pub(crate) async fn think(
        &self,
        state: &mut SessionState,
        system: &str,
        tools: &mut Vec<ToolDefinition>,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Result<(Response, f64), Ending> {
        let mut answers = self
            .think_n(state, system, tools, 1, true, scope, interrupt)
            .await?;
        Ok(answers.remove(0))
    }

    /// `n` model calls on the same conversation at once, not streamed
    /// (a planner picks one); every response and its price, in call order.
    pub(crate) async fn think_candidates(
        &self,
        state: &mut SessionState,
        system: &str,
        tools: &mut Vec<ToolDefinition>,
        n: u32,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Result<Vec<(Response, f64)>, Ending> {
        self.think_n(state, system, tools, n, false, scope, interrupt)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn think_n(
        &self,
        state: &mut SessionState,
        system: &str,
        tools: &mut Vec<ToolDefinition>,
        n: u32,
        stream: bool,
        scope: &Scope,
        interrupt: &CancellationToken,
    ) -> Result<Vec<(Response, f64)>, Ending> {
        let request = Request {
            model: self.config.model.clone(),
            system: system.to_string(),
            messages: std::mem::take(&mut state.messages),
            tools: std::mem::take(tools),
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        let sink = |event: StreamEvent| match event {
            StreamEvent::TextDelta(text) if stream => {
                self.observer.on_event(&Event::TextDelta { text })
            }
            StreamEvent::Retrying { attempt, error } => {
                self.observer.on_event(&Event::Retry { attempt, error })
            }
            StreamEvent::FallingBack { from, to, error } => {
                self.observer.on_event(&Event::Fallback { from, to, error })
            }
            StreamEvent::TextDelta(_) | StreamEvent::ToolCallStarted { .. } => {}
        };
        let key = StepKey {
            session: state.session_id.clone(),
            cycle: state.cycles + 1,
            kind: StepKind::Model,
            id: n.max(1).to_string(),
        };
        let calls = self
            .config
            .steps
            .model(key, self.provider.complete_n(&request, n.max(1), &sink));
        let outcome = bounded(calls, scope.deadline, interrupt).await;
        state.messages = request.messages;
        *tools = request.tools;
        let outcomes = match outcome {
            Ok(outcomes) => outcomes,
            Err(cut) => return Err(self.cut_ending(cut, "waiting for the model")),
        };
        let mut answers = Vec::with_capacity(outcomes.len());
        let mut failure = None;
        for outcome in outcomes {
            match outcome {
                Ok(response) => {
                    let cost = (self.pricing)(&response.model, &response.usage);
                    scope.charge(&response.usage, cost);
                    answers.push((response, cost));
                }
                Err(err) => failure = Some(err.message),
            }
        }
        // A failed candidate is dropped while another answered.
        match failure {
            Some(message) if answers.is_empty() => Err((Status::Error, Some(message))),
            _ => Ok(answers),
        }
    }
}
