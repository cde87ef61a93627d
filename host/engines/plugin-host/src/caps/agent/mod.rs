//! `agent`: a plugin runs sub-agents through the call's
//! [`SubAgentLink`], within the session's tools and budget.

use super::{CapStore, CapView, HasCap, HostCapability, LoadContext, Slot, StoreContext, flag};
use crate::bindings::agent;
use crate::call::CallSetup;
use kaizen_tools::SubAgentLink;
use wasmtime::component::Linker;

/// The `agent` capability.
pub(crate) struct Agent;

impl HostCapability for Agent {
    const NAME: &'static str = "agent";
    const IMPORTS: &'static [&'static str] = &["kaizen:plugin/agent"];
    type Request = bool;
    type Grant = bool;
    type Shared = ();
    /// Where the current tool call may start sub-agents.
    type State = SubAgentLink;

    flag::flag_methods!();

    fn link<T: CapStore>(linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        agent::add_to_linker::<T, HasCap<Self>>(linker, T::view::<Self>)
    }

    fn load(_cx: &LoadContext<'_>) {}

    fn new_state(_shared: &(), _cx: &mut StoreContext<'_>) -> anyhow::Result<SubAgentLink> {
        Ok(SubAgentLink::default())
    }

    fn begin_call(state: &mut SubAgentLink, _shared: &(), call: &CallSetup<'_>) {
        if let Some(ctx) = call.tool {
            *state = ctx.sub_agents.clone();
        }
    }
}

impl agent::Host for CapView<'_, Agent> {
    async fn run(&mut self, req: agent::AgentRequest) -> Result<agent::AgentResult, String> {
        let request = kaizen_tools::SubAgentRequest {
            description: req.description,
            prompt: req.prompt,
            subagent_type: req.subagent_type,
        };
        let run = self.state.run(self.call_id, request);
        // The sub-agent's time is bounded by the session, not the plugin's
        // CPU allowance.
        self.clock.begin_wait();
        let report = run.await;
        self.clock.end_wait();
        let report = report?;
        Ok(agent::AgentResult {
            output: report.output,
            status: report.status,
            error: report.error,
            cycles: report.cycles,
            cost_usd: report.cost_usd,
            tool_calls: report.tool_calls,
        })
    }
}
