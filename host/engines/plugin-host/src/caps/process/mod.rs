//! `process`: programs a plugin starts through the `process` import, run
//! in the OS sandbox of `kaizen-sandbox`.

mod host;
mod sandboxes;

use super::{
    CapStore, EffectiveGrant, GrantContext, HasCap, HostCapability, LoadContext, Slot, StoreContext,
};
use crate::bindings::process;
use crate::call::CallSetup;
use host::ProcessAccess;
use kaizen_sandbox::Containment;
use sandboxes::SessionSandboxes;
use serde::{Deserialize, Serialize};
use wasmtime::component::Linker;

/// Running programs in the OS sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessCapability {
    /// Program names the plugin may start; `*` for any.
    #[serde(default)]
    pub programs: Vec<String>,
    /// Whether started programs get network access.
    #[serde(default)]
    pub network: bool,
}

/// The `process` capability.
pub(crate) struct Process;

impl HostCapability for Process {
    const NAME: &'static str = "process";
    const IMPORTS: &'static [&'static str] = &["kaizen:plugin/process"];
    type Request = Option<ProcessCapability>;
    type Grant = Option<ProcessCapability>;
    type Shared = Option<SessionSandboxes>;
    /// The session's sandbox, set for each tool call.
    type State = Option<ProcessAccess>;

    fn check(request: &Option<ProcessCapability>) -> Result<(), String> {
        match request {
            Some(process) => match process.programs.iter().find(|p| p.is_empty()) {
                Some(bad) => Err(format!("process program `{bad}` is empty")),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    fn union(
        a: &Option<ProcessCapability>,
        b: &Option<ProcessCapability>,
    ) -> Option<ProcessCapability> {
        match (a, b) {
            (Some(a), Some(b)) => Some(ProcessCapability {
                programs: super::merged(&a.programs, &b.programs),
                network: a.network || b.network,
            }),
            (a, b) => a.clone().or_else(|| b.clone()),
        }
    }

    fn intersect(
        _cx: &GrantContext<'_>,
        requested: &Option<ProcessCapability>,
        granted: &Option<ProcessCapability>,
        out: &mut EffectiveGrant,
    ) -> Option<ProcessCapability> {
        let want = requested.as_ref()?;
        let Some(grant) = granted else {
            out.denied.push("process: not granted".into());
            return None;
        };
        let any = grant.programs.iter().any(|p| p == "*");
        let (programs, refused): (Vec<String>, Vec<String>) = want
            .programs
            .iter()
            .cloned()
            .partition(|program| any || grant.programs.contains(program));
        for program in refused {
            out.denied.push(format!("process: program `{program}`"));
        }
        if want.network && !grant.network {
            out.denied.push("process: network access".into());
        }
        if programs.is_empty() {
            return None;
        }
        Some(ProcessCapability {
            programs,
            network: want.network && grant.network,
        })
    }

    fn is_granted(grant: &Option<ProcessCapability>) -> bool {
        grant.is_some()
    }

    fn describe_request(request: &Option<ProcessCapability>) -> Vec<String> {
        request.iter().map(describe).collect()
    }

    fn describe_grant(grant: &Option<ProcessCapability>) -> Vec<String> {
        grant.iter().map(describe).collect()
    }

    /// Programs with the network, or in a sandbox that could not be made
    /// whole, reach beyond the grant.
    fn escapes(grant: &Option<ProcessCapability>, sandbox: &Containment) -> bool {
        grant
            .as_ref()
            .is_some_and(|process| process.network || sandbox.degraded())
    }

    fn link<T: CapStore>(linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        process::add_to_linker::<T, HasCap<Self>>(linker, T::view::<Self>)
    }

    fn load(cx: &LoadContext<'_>) -> Option<SessionSandboxes> {
        SessionSandboxes::for_grant(cx.grant, &cx.host.sandbox, cx.env)
    }

    fn new_state(
        _shared: &Option<SessionSandboxes>,
        _cx: &mut StoreContext<'_>,
    ) -> anyhow::Result<Option<ProcessAccess>> {
        Ok(None)
    }

    /// A tool call reaches its session's sandbox; hooks and planners
    /// never run programs.
    fn begin_call(
        state: &mut Option<ProcessAccess>,
        shared: &Option<SessionSandboxes>,
        call: &CallSetup<'_>,
    ) {
        if let Some(ctx) = call.tool {
            *state = shared
                .as_ref()
                .map(|sandboxes| sandboxes.access(&ctx.session_id));
        }
    }

    fn end_session(shared: &Option<SessionSandboxes>, session: &str) {
        if let Some(sandboxes) = shared {
            sandboxes.end_session(session);
        }
    }
}

/// A process request or grant as listings show it.
fn describe(process: &ProcessCapability) -> String {
    let network = if process.network {
        "with network"
    } else {
        "no network"
    };
    format!("process {} ({network})", process.programs.join(", "))
}
