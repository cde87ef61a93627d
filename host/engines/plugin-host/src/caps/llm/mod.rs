//! `llm`: a plugin's completion goes to the session through the call's
//! [`CompletionLink`], which picks the model, enforces the operator's caps
//! and counts the cost. Served during a tool's call, a planner's calls and
//! a hook's events.

use super::{CapStore, CapView, HasCap, HostCapability, LoadContext, Slot, StoreContext, flag};
use crate::bindings::llm;
use crate::call::CallSetup;
use kaizen_tools::{CompletionError, CompletionLink, CompletionRequest, PromptMessage};
use wasmtime::component::Linker;

/// The `llm` capability.
pub(crate) struct Llm;

impl HostCapability for Llm {
    const NAME: &'static str = "llm";
    const IMPORTS: &'static [&'static str] = &["kaizen:plugin/llm"];
    /// Before it, `llm` was an unstable draft.
    const SINCE: Option<&'static str> = Some("0.1.3");
    type Request = bool;
    type Grant = bool;
    type Shared = ();
    /// Where the current call's completions go.
    type State = CompletionLink;

    flag::flag_methods!();

    fn link<T: CapStore>(linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        llm::add_to_linker::<T, HasCap<Self>>(linker, T::view::<Self>)
    }

    fn load(_cx: &LoadContext<'_>) {}

    fn new_state(_shared: &(), _cx: &mut StoreContext<'_>) -> anyhow::Result<CompletionLink> {
        Ok(CompletionLink::default())
    }

    fn begin_call(state: &mut CompletionLink, _shared: &(), call: &CallSetup<'_>) {
        *state = call.completions.clone();
    }
}

impl llm::Host for CapView<'_, Llm> {
    async fn complete(
        &mut self,
        req: llm::CompletionRequest,
    ) -> Result<llm::Completion, llm::LlmError> {
        let mut messages = Vec::with_capacity(req.messages.len());
        for message in req.messages {
            let assistant = match message.role.as_str() {
                "user" => false,
                "assistant" => true,
                other => {
                    return Err(llm::LlmError::Refused(format!(
                        "a message's role is `{other}`; use `user` or `assistant`"
                    )));
                }
            };
            messages.push(PromptMessage {
                assistant,
                content: message.content,
            });
        }
        let request = CompletionRequest {
            model_role: req.model_role,
            system: req.system,
            messages,
            max_tokens: req.max_tokens,
            temperature: req.temperature,
        };
        let call = self.state.complete(self.plugin, self.call_id, request);
        // The model's time is bounded by the session, not the plugin's CPU
        // allowance.
        self.clock.begin_wait();
        let answer = call.await;
        self.clock.end_wait();
        match answer {
            Ok(done) => Ok(llm::Completion {
                text: done.text,
                model: done.model,
                input_tokens: done.input_tokens,
                output_tokens: done.output_tokens,
                cost_usd: done.cost_usd,
            }),
            Err(CompletionError::BudgetExceeded(why)) => Err(llm::LlmError::BudgetExceeded(why)),
            Err(CompletionError::Refused(why)) => Err(llm::LlmError::Refused(why)),
            Err(CompletionError::Provider(why)) => Err(llm::LlmError::Provider(why)),
            Err(CompletionError::Cancelled(why)) => Err(llm::LlmError::Cancelled(why)),
        }
    }
}
