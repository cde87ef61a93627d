//! The contract's `llm` interface: a plugin's completion goes to the
//! session through the call's [`kaizen_tools::CompletionLink`], which
//! picks the model, enforces the operator's caps and counts the cost.

use crate::bindings::llm;
use crate::state::PluginState;
use kaizen_tools::{CompletionError, CompletionRequest, PromptMessage};

impl llm::Host for PluginState {
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
        let call = self
            .completions
            .complete(&self.name, &self.call_id, request);
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
