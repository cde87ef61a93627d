//! A loaded plugin's wasm component instances, and calls into them: a
//! fresh instance per call, or one per session for a stateful plugin;
//! limits armed on every call; any trap discards the instance so the next
//! call starts clean.

use crate::bindings::{guest_planning, guest_tools};
use crate::call::{CallSetup, FanOutTarget};
use crate::clock::ClockShared;
use crate::contract_versions::{HooksExport, HooksIndices};
use crate::hook_convert;
use crate::outcome::{convert_error, convert_output, describe_trap};
use crate::state::{PluginIdentity, PluginState};
use crate::wasm_engine::PluginEngine;
use futures::future::BoxFuture;
use kaizen_hooks::{HookDecision, HookEvent, Subscription};
use kaizen_tools::{CallContext, CompletionLink, ToolError, ToolOutput};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use wasmtime::component::InstancePre;
use wasmtime::{Store, UpdateDeadline};

/// A live instance with its store, and the contract interfaces it
/// exports.
pub(crate) struct LiveInstance {
    pub store: Store<PluginState>,
    tools: Option<guest_tools::Guest>,
    hooks: Option<HooksExport>,
    pub planning: Option<guest_planning::Guest>,
}

impl LiveInstance {
    /// Gives the store what `call` brings.
    pub(crate) fn begin_call(&mut self, identity: &PluginIdentity, call: &CallSetup<'_>) {
        self.store.data_mut().call.begin(&identity.caps, call);
    }
}

pub(crate) type SessionSlot = Arc<tokio::sync::Mutex<Option<LiveInstance>>>;

/// One plugin's instances: everything needed to make and call them, and
/// those kept between calls.
pub(crate) struct PluginInstances {
    pub identity: PluginIdentity,
    pre: InstancePre<PluginState>,
    tools_indices: Option<guest_tools::GuestIndices>,
    hooks_indices: Option<HooksIndices>,
    planning_indices: Option<guest_planning::GuestIndices>,
    stateful: bool,
    sessions: Mutex<HashMap<String, SessionSlot>>,
    /// A stateful hook plugin's instance, kept between events; the lock
    /// also makes one plugin's events go one at a time.
    hook_instance: tokio::sync::Mutex<Option<LiveInstance>>,
    /// Itself, for calls that fan out through `parallel`.
    me: Weak<dyn FanOutTarget>,
}

impl PluginInstances {
    pub fn new(
        identity: PluginIdentity,
        pre: InstancePre<PluginState>,
        stateful: bool,
    ) -> Arc<Self> {
        let tools_indices = guest_tools::GuestIndices::new(&pre).ok();
        let planning_indices = guest_planning::GuestIndices::new(&pre).ok();
        let hooks_indices = HooksIndices::find(&pre);
        Arc::new_cyclic(|me| Self {
            identity,
            pre,
            tools_indices,
            hooks_indices,
            planning_indices,
            stateful,
            sessions: Mutex::default(),
            hook_instance: tokio::sync::Mutex::default(),
            me: me.clone() as Weak<dyn FanOutTarget>,
        })
    }

    /// A new store with limits and the CPU clock armed.
    fn new_store(&self, cwd: Option<&Path>) -> anyhow::Result<Store<PluginState>> {
        let state = PluginState::new(&self.identity, cwd)?;
        let limit = state.clock.limit();
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.limiter);
        store.epoch_deadline_callback(|mut ctx| {
            let clock = &mut ctx.data_mut().clock;
            Ok(match clock.remaining() {
                // Time went to host calls: extend, yielding to the executor.
                Some(left) => UpdateDeadline::Yield(PluginEngine::ticks_for(left)),
                None => {
                    clock.exceeded = true;
                    UpdateDeadline::Interrupt
                }
            })
        });
        store.set_epoch_deadline(PluginEngine::ticks_for(limit));
        Ok(store)
    }

    pub(crate) async fn instantiate(&self, cwd: Option<&Path>) -> Result<LiveInstance, ToolError> {
        let plugin = &self.identity.name;
        let mut store = self.new_store(cwd).map_err(|err| {
            ToolError::new(
                kaizen_tools::ToolErrorKind::Failed,
                format!("could not prepare plugin `{plugin}`: {err:#}"),
            )
        })?;
        let instance = match self.pre.instantiate_async(&mut store).await {
            Ok(instance) => instance,
            Err(err) => return Err(describe_trap(plugin, "instantiation", &err, store.data())),
        };
        let trap = |err: wasmtime::Error, store: &Store<PluginState>| {
            describe_trap(plugin, "instantiation", &err, store.data())
        };
        let tools = match &self.tools_indices {
            Some(indices) => Some(
                indices
                    .load(&mut store, &instance)
                    .map_err(|e| trap(e, &store))?,
            ),
            None => None,
        };
        let hooks = match &self.hooks_indices {
            Some(indices) => Some(
                indices
                    .load(&mut store, &instance)
                    .map_err(|e| trap(e, &store))?,
            ),
            None => None,
        };
        let planning = match &self.planning_indices {
            Some(indices) => Some(
                indices
                    .load(&mut store, &instance)
                    .map_err(|e| trap(e, &store))?,
            ),
            None => None,
        };
        Ok(LiveInstance {
            store,
            tools,
            hooks,
            planning,
        })
    }

    /// The component's `tools` export, or an error saying it has none.
    fn tools_of<'l>(&self, live: &'l LiveInstance) -> Result<&'l guest_tools::Guest, ToolError> {
        live.tools.as_ref().ok_or_else(|| {
            ToolError::new(
                kaizen_tools::ToolErrorKind::Crashed,
                format!(
                    "plugin `{}` does not export kaizen:plugin/tools",
                    self.identity.name
                ),
            )
        })
    }

    /// The hook subscriptions the component declares (runs a throwaway
    /// instance).
    pub async fn hook_subscriptions(&self) -> Result<Vec<Subscription>, String> {
        let fail = |err: ToolError| err.message;
        let mut live = self.instantiate(None).await.map_err(fail)?;
        let hooks = self.hooks_of(&live).map_err(fail)?.clone();
        live.store.data_mut().clock.restart();
        let plugin = &self.identity.name;
        let trap = |err: wasmtime::Error, live: &LiveInstance| {
            describe_trap(plugin, "subscriptions()", &err, live.store.data()).message
        };
        let declared = hooks.subscriptions(&mut live.store).await;
        hook_convert::subscriptions(plugin, declared.map_err(|e| trap(e, &live))?)
    }

    /// Hands one event to the component's `handle`, in a fresh instance
    /// with the plugin's limits; `Ok(None)` when its contract version has
    /// no such event.
    pub async fn handle_hook(
        &self,
        event: HookEvent,
        payload: String,
        completions: CompletionLink,
    ) -> Result<Option<HookDecision>, String> {
        // One event at a time per plugin: a hook may keep state (a log's
        // chain), and its events come from concurrent sub-agents too.
        let mut kept = self.hook_instance.lock().await;
        let mut live = match kept.take() {
            Some(live) => live,
            None => self.instantiate(None).await.map_err(|err| err.message)?,
        };
        live.begin_call(&self.identity, &CallSetup::hook(&completions));
        let (answer, healthy) = self.handle_on(&mut live, event, &payload).await;
        // A stateful hook plugin keeps its instance for the run, unless the
        // call broke it.
        if self.stateful && healthy {
            *kept = Some(live);
        }
        answer
    }

    async fn handle_on(
        &self,
        live: &mut LiveInstance,
        event: HookEvent,
        payload: &String,
    ) -> (Result<Option<HookDecision>, String>, bool) {
        let hooks = match self.hooks_of(live) {
            Ok(hooks) => hooks.clone(),
            Err(err) => return (Err(err.message), true),
        };
        let store = &mut live.store;
        store.data_mut().clock.restart();
        store.set_epoch_deadline(PluginEngine::ticks_for(store.data().clock.limit()));
        let clock = store.data().clock.shared();
        let plugin = &self.identity.name;
        // An event the component's contract version lacks is not sent.
        let Some(call) =
            hook_convert::to_wit(event).and_then(|event| hooks.handle(&mut *store, event, payload))
        else {
            return (Ok(None), true);
        };
        let answer = watchdog(call, &clock)
            .await
            .map(|result| result.map(hook_convert::decision));
        let Some(result) = answer else {
            return (
                Err(stuck_in_host(plugin, "handle()", clock.limit()).message),
                false,
            );
        };
        match result {
            Ok(decision) => (decision.map(Some), true),
            Err(err) => (
                Err(describe_trap(plugin, "handle()", &err, store.data()).message),
                false,
            ),
        }
    }

    fn hooks_of<'l>(&self, live: &'l LiveInstance) -> Result<&'l HooksExport, ToolError> {
        live.hooks.as_ref().ok_or_else(|| {
            ToolError::new(
                kaizen_tools::ToolErrorKind::Crashed,
                format!(
                    "plugin `{}` does not export kaizen:plugin/hooks",
                    self.identity.name
                ),
            )
        })
    }

    /// The tool specs the component declares (runs a throwaway instance).
    pub async fn list_tools(&self) -> Result<Vec<guest_tools::ToolSpec>, ToolError> {
        let mut live = self.instantiate(None).await?;
        let tools = self.tools_of(&live)?.clone();
        live.store.data_mut().clock.restart();
        match tools.call_tools(&mut live.store).await {
            Ok(specs) => Ok(specs),
            Err(err) => Err(describe_trap(
                &self.identity.name,
                "tools()",
                &err,
                live.store.data(),
            )),
        }
    }

    /// Calls tool `name` with `input` (already validated JSON).
    pub async fn call(
        &self,
        ctx: &CallContext,
        name: &str,
        input: String,
    ) -> Result<ToolOutput, ToolError> {
        if !self.stateful {
            let mut live = self.instantiate(Some(&ctx.cwd)).await?;
            return self.call_on(&mut live, ctx, name, &input, true).await.0;
        }
        let slot = self.session_slot(&ctx.session_id);
        let mut guard = slot.lock().await;
        let mut live = match guard.take() {
            Some(live) => live,
            None => self.instantiate(Some(&ctx.cwd)).await?,
        };
        let (result, healthy) = self.call_on(&mut live, ctx, name, &input, true).await;
        if healthy {
            *guard = Some(live);
        }
        result
    }

    /// Runs one call (which may fan out through `parallel` when the grant
    /// allows and `may_fan_out`); the flag says whether the instance may be
    /// reused.
    async fn call_on(
        &self,
        live: &mut LiveInstance,
        ctx: &CallContext,
        name: &str,
        input: &String,
        may_fan_out: bool,
    ) -> (Result<ToolOutput, ToolError>, bool) {
        let plugin = &self.identity.name;
        let tools = match self.tools_of(live) {
            Ok(tools) => tools.clone(),
            Err(error) => return (Err(error), true),
        };
        // A stateful instance serves many calls: each sees its own
        // directory, sandbox and notes.
        let fan_out = may_fan_out.then_some(&self.me);
        live.begin_call(&self.identity, &CallSetup::tool(ctx, fan_out));
        let store = &mut live.store;
        store.data_mut().clock.restart();
        store.set_epoch_deadline(PluginEngine::ticks_for(store.data().clock.limit()));
        let wit_ctx = guest_tools::CallContext {
            session_id: ctx.session_id.clone(),
            call_id: ctx.call_id.clone(),
            workspace: ctx.workspace.to_string_lossy().into_owned(),
            cwd: ctx.cwd.to_string_lossy().into_owned(),
        };
        let clock = store.data().clock.shared();
        let call = tools.call_call(&mut *store, &wit_ctx, name, input);
        let Some(result) = watchdog(call, &clock).await else {
            // The call was dropped mid-way: the instance cannot be entered again.
            return (Err(stuck_in_host(plugin, name, clock.limit())), false);
        };
        let refusals = store.data().call.take_refusals();
        match result {
            Ok(Ok(output)) => (convert_output(plugin, name, output), true),
            Ok(Err(error)) => (Err(convert_error(error, &refusals)), true),
            Err(err) => (Err(describe_trap(plugin, name, &err, store.data())), false),
        }
    }

    pub(crate) fn session_slot(&self, session: &str) -> SessionSlot {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.entry(session.to_string()).or_default().clone()
    }

    /// Drops the instance kept for `session` (stateful plugins).
    pub fn end_session(&self, session: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.remove(session);
        self.identity.caps.end_session(session);
    }
}

/// The calls a `parallel` call-each makes: each in a fresh instance that
/// cannot fan out.
impl FanOutTarget for PluginInstances {
    fn call_alone<'a>(
        &'a self,
        ctx: &'a CallContext,
        name: &'a str,
        input: String,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let mut live = self
                .instantiate(Some(&ctx.cwd))
                .await
                .map_err(|err| err.message)?;
            match self.call_on(&mut live, ctx, name, &input, false).await.0 {
                Ok(output) => Ok(output.joined_text()),
                Err(err) => Err(err.message),
            }
        })
    }
}

/// Runs `call` until it finishes, or returns `None` once the clock has
/// run out while the guest sits in a host wait the epoch cannot interrupt.
pub(crate) async fn watchdog<F: std::future::Future>(
    call: F,
    clock: &ClockShared,
) -> Option<F::Output> {
    // Leave the epoch deadline the first chance to stop guest code.
    const GRACE: Duration = Duration::from_millis(250);
    tokio::pin!(call);
    loop {
        let left = clock.remaining().unwrap_or_default();
        tokio::select! {
            output = &mut call => return Some(output),
            () = tokio::time::sleep(left + GRACE) => {
                // Still time left: it was spent waiting on the user.
                clock.remaining()?;
            }
        }
    }
}

pub(crate) fn stuck_in_host(plugin: &str, tool: &str, limit: Duration) -> ToolError {
    ToolError::new(
        kaizen_tools::ToolErrorKind::Timeout,
        format!(
            "{tool} (plugin `{plugin}`) was still waiting (for a network response or another host call) when its time limit of {:.1} s ran out, and was stopped. Try again later or ask for less.",
            limit.as_secs_f64()
        ),
    )
}
