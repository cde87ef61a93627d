//! `parallel`: a plugin runs several calls of its own tools at once, each
//! in a fresh instance on a thread of the host's runtime, for work that
//! splits (searching many files). The calls made this way share the
//! calling call's context and each has the plugin's limits; they cannot
//! fan out again.

use super::{CapStore, CapView, HasCap, HostCapability, LoadContext, Slot, StoreContext, flag};
use crate::bindings::parallel;
use crate::call::{CallSetup, FanOutTarget};
use futures::StreamExt;
use kaizen_tools::CallContext;
use std::sync::{Arc, Weak};
use wasmtime::component::Linker;

/// The most calls that run at once, whatever the machine.
const MAX_WIDTH: usize = 8;

/// The most inputs one `call-each` takes: each is a fresh instance with
/// the plugin's memory, so an unbounded list is an unbounded host cost.
pub(crate) const MAX_INPUTS: usize = 256;

/// What a call needs to fan out: its plugin and its context.
#[derive(Clone)]
pub(crate) struct FanOut {
    target: Weak<dyn FanOutTarget>,
    ctx: CallContext,
}

/// The `parallel` capability.
pub(crate) struct Parallel;

impl HostCapability for Parallel {
    const NAME: &'static str = "parallel";
    const IMPORTS: &'static [&'static str] = &["kaizen:plugin/parallel"];
    type Request = bool;
    type Grant = bool;
    /// Whether the plugin has it.
    type Shared = bool;
    /// How the current call may fan out; none for calls made that way.
    type State = Option<FanOut>;

    flag::flag_methods!();

    fn link<T: CapStore>(linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        parallel::add_to_linker::<T, HasCap<Self>>(linker, T::view::<Self>)
    }

    fn load(cx: &LoadContext<'_>) -> bool {
        cx.grant.parallel
    }

    fn new_state(_granted: &bool, _cx: &mut StoreContext<'_>) -> anyhow::Result<Option<FanOut>> {
        Ok(None)
    }

    fn begin_call(state: &mut Option<FanOut>, granted: &bool, call: &CallSetup<'_>) {
        if let Some(ctx) = call.tool {
            *state = call.fan_out.filter(|_| *granted).map(|target| FanOut {
                target: target.clone(),
                ctx: ctx.clone(),
            });
        }
    }
}

/// How many calls run at once: the machine's cores, at most [`MAX_WIDTH`].
pub(crate) fn width() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WIDTH)
}

/// Calls tool `name` of `target` once per input, [`width`] at a time, each
/// in a fresh instance on its own task; results in input order.
async fn call_each(
    target: Arc<dyn FanOutTarget>,
    ctx: &CallContext,
    name: &str,
    inputs: Vec<String>,
) -> Vec<Result<String, String>> {
    let calls = inputs.into_iter().map(|input| {
        let target = target.clone();
        let ctx = ctx.clone();
        let name = name.to_string();
        async move {
            let call = tokio::spawn(async move { target.call_alone(&ctx, &name, input).await });
            call.await
                .unwrap_or_else(|err| Err(format!("the call could not finish: {err}")))
        }
    });
    futures::stream::iter(calls)
        .buffered(width())
        .collect()
        .await
}

impl parallel::Host for CapView<'_, Parallel> {
    async fn width(&mut self) -> u32 {
        width() as u32
    }

    async fn call_each(
        &mut self,
        name: String,
        inputs: Vec<String>,
    ) -> Vec<Result<String, String>> {
        if inputs.len() > MAX_INPUTS {
            let why = format!(
                "call-each takes at most {MAX_INPUTS} inputs and was given {}; split the work \
                 into fewer, larger parts",
                inputs.len()
            );
            return inputs.iter().map(|_| Err(why.clone())).collect();
        }
        let fan_out = &*self.state;
        let target = fan_out.as_ref().and_then(|fan| fan.target.upgrade());
        let (Some(target), Some(fan)) = (target, fan_out.clone()) else {
            let why = "this call was itself made through `parallel` and cannot fan out again";
            return inputs.iter().map(|_| Err(why.to_string())).collect();
        };
        // The calls have their own limits; waiting for them is not this
        // call's time.
        self.clock.begin_wait();
        let results = call_each(target, &fan.ctx, &name, inputs).await;
        self.clock.end_wait();
        results
    }
}
