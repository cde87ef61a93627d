//! A planner served by a component, as the loop sees it: the component's
//! `planning` export, one instance per session (so it may keep its plan
//! between calls), each call with the plugin's limits and the run's
//! completions.

use crate::bindings::guest_planning as wit;
use crate::call::CallSetup;
use crate::instance::{LiveInstance, PluginInstances, stuck_in_host, watchdog};
use crate::outcome::describe_trap;
use crate::wasm_engine::PluginEngine;
use kaizen_planning::{Planner, PlannerCall, PlannerFuture, ThinkContext, ThinkPlan, Verdict};
use std::sync::Arc;

/// One planner plugin.
pub struct ComponentPlanner {
    name: String,
    instances: Arc<PluginInstances>,
}

impl ComponentPlanner {
    pub(crate) fn new(instances: Arc<PluginInstances>) -> Self {
        Self {
            name: instances.identity.name.to_string(),
            instances,
        }
    }

    /// Runs `call` on the session's instance (made on first use) with the
    /// call's completions; an instance a call broke is dropped.
    async fn on_instance<T>(
        &self,
        call: PlannerCall,
        ctx: &ThinkContext,
        what: &str,
        run: impl AsyncFnOnce(&wit::Guest, &mut LiveInstance) -> wasmtime::Result<T>,
    ) -> Result<T, String> {
        let slot = self.instances.session_slot(&ctx.session_id);
        let mut kept = slot.lock().await;
        let mut live = match kept.take() {
            Some(live) => live,
            None => self
                .instances
                .instantiate(None)
                .await
                .map_err(|err| err.message)?,
        };
        let Some(planning) = live.planning.clone() else {
            return Err(format!(
                "plugin `{}` does not export kaizen:plugin/planning",
                self.name
            ));
        };
        live.begin_call(
            &self.instances.identity,
            &CallSetup::planner(&call.completions, &call.notes),
        );
        let state = live.store.data_mut();
        state.clock.restart();
        let limit = state.clock.limit();
        let clock = state.clock.shared();
        live.store
            .set_epoch_deadline(PluginEngine::ticks_for(limit));
        let answer = watchdog(run(&planning, &mut live), &clock).await;
        match answer {
            Some(Ok(value)) => {
                *kept = Some(live);
                Ok(value)
            }
            Some(Err(err)) => Err(describe_trap(&self.name, what, &err, live.store.data()).message),
            None => Err(stuck_in_host(&self.name, what, clock.limit()).message),
        }
    }
}

fn wit_context(ctx: &ThinkContext) -> wit::ThinkContext {
    wit::ThinkContext {
        session_id: ctx.session_id.clone(),
        cycle: ctx.cycle,
        task: ctx.task.clone(),
        transcript: ctx.transcript.to_string(),
        tools: ctx.tools.clone(),
        settings: ctx.settings.to_string(),
    }
}

fn json(what: &str, text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|err| format!("returned {what} that is not JSON ({err})"))
}

impl Planner for ComponentPlanner {
    fn name(&self) -> &str {
        &self.name
    }

    fn plan<'a>(
        &'a self,
        call: PlannerCall,
        ctx: &'a ThinkContext,
    ) -> PlannerFuture<'a, ThinkPlan> {
        Box::pin(async move {
            let wit_ctx = wit_context(ctx);
            let plan = self
                .on_instance(call, ctx, "plan()", async |planning, live| {
                    planning.call_plan(&mut live.store, &wit_ctx).await
                })
                .await?;
            let todos = match plan.todos {
                Some(text) => Some(json("a todo list", &text)?),
                None => None,
            };
            Ok(ThinkPlan {
                system_additions: plan.system_additions,
                injected: plan.injected,
                candidates: plan.candidates,
                todos,
            })
        })
    }

    fn select<'a>(
        &'a self,
        call: PlannerCall,
        ctx: &'a ThinkContext,
        candidates: &'a [serde_json::Value],
    ) -> PlannerFuture<'a, u32> {
        Box::pin(async move {
            let wit_ctx = wit_context(ctx);
            let texts: Vec<String> = candidates.iter().map(ToString::to_string).collect();
            self.on_instance(call, ctx, "select()", async |planning, live| {
                planning
                    .call_select(&mut live.store, &wit_ctx, &texts)
                    .await
            })
            .await
        })
    }

    fn verify<'a>(
        &'a self,
        call: PlannerCall,
        ctx: &'a ThinkContext,
        answer: &'a str,
    ) -> PlannerFuture<'a, Verdict> {
        Box::pin(async move {
            let wit_ctx = wit_context(ctx);
            let verdict = self
                .on_instance(call, ctx, "verify()", async |planning, live| {
                    planning
                        .call_verify(&mut live.store, &wit_ctx, answer)
                        .await
                })
                .await?;
            Ok(match verdict {
                wit::Verdict::Accept => Verdict::Accept,
                wit::Verdict::Revise(message) => Verdict::Revise(message),
            })
        })
    }

    fn end_session(&self, session: &str) {
        self.instances.end_session(session);
    }
}
