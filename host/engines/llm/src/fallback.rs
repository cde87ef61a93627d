//! A provider that falls back: each request goes to its model's provider,
//! and when that one keeps failing after its own retries (429, 5xx, a
//! network error, a timeout) the request goes to the next model of the
//! model's fallback chain, which may be another vendor's. Errors that a
//! retry elsewhere cannot fix (a bad key, a refused request) are returned
//! as they are.

use crate::select::{SelectError, Selection};
use crate::types::{
    CompletionFuture, CompletionsFuture, EventSink, LlmError, LlmErrorKind, Provider, Request,
    Response, StreamEvent,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Makes the provider of a fallback model (usually
/// [`crate::select_provider`] with the model's name).
pub type ProviderFactory = Box<dyn Fn(&str) -> Result<Selection, SelectError> + Send + Sync>;

/// A fallback model's provider, and the name it knows the model by.
type Made = (Arc<dyn Provider>, String);

/// A provider with fallback chains.
pub struct FallbackProvider {
    primary: Box<dyn Provider>,
    chains: HashMap<String, Vec<String>>,
    make: ProviderFactory,
    /// Fallback models' providers and the names they know the models by,
    /// made on first use.
    made: Mutex<HashMap<String, Made>>,
}

impl FallbackProvider {
    /// Requests go to `primary`; a model with a chain in `chains` (model →
    /// the models to try next, in order) falls back along it, each
    /// fallback's provider made by `make`.
    pub fn new(
        primary: Box<dyn Provider>,
        chains: HashMap<String, Vec<String>>,
        make: ProviderFactory,
    ) -> Self {
        Self {
            primary,
            chains,
            make,
            made: Mutex::default(),
        }
    }

    fn provider_of(&self, model: &str) -> Result<Made, LlmError> {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = made.get(model) {
            return Ok(known.clone());
        }
        let selection = (self.make)(model).map_err(|err| LlmError {
            kind: LlmErrorKind::Auth,
            message: format!("the fallback model `{model}` cannot be used: {err}"),
        })?;
        let known = (Arc::from(selection.provider), selection.model);
        made.insert(model.to_string(), known.clone());
        Ok(known)
    }
}

/// Whether another model might answer where this one failed.
fn worth_falling_back(kind: LlmErrorKind) -> bool {
    matches!(
        kind,
        LlmErrorKind::RateLimited
            | LlmErrorKind::Server
            | LlmErrorKind::Network
            | LlmErrorKind::Timeout
    )
}

impl Provider for FallbackProvider {
    fn name(&self) -> &str {
        self.primary.name()
    }

    fn complete<'a>(&'a self, request: &'a Request, events: EventSink<'a>) -> CompletionFuture<'a> {
        Box::pin(async move {
            let first = self.primary.complete(request, events).await;
            self.fall_back(first, request, events).await
        })
    }

    /// The primary's candidates (its `n`, where it has one); each that
    /// failed falls back on its own.
    fn complete_n<'a>(
        &'a self,
        request: &'a Request,
        n: u32,
        events: EventSink<'a>,
    ) -> CompletionsFuture<'a> {
        Box::pin(async move {
            let answers = self.primary.complete_n(request, n, events).await;
            let mut out = Vec::with_capacity(answers.len());
            for answer in answers {
                out.push(self.fall_back(answer, request, events).await);
            }
            out
        })
    }
}

impl FallbackProvider {
    /// `first`, or when it failed in a way another model might not, the
    /// answer of the first model down `request`'s chain that gives one.
    async fn fall_back(
        &self,
        first: Result<Response, LlmError>,
        request: &Request,
        events: EventSink<'_>,
    ) -> Result<Response, LlmError> {
        let chain = match (&first, self.chains.get(&request.model)) {
            (Err(err), Some(chain)) if worth_falling_back(err.kind) => chain,
            _ => return first,
        };
        let mut last = first;
        let mut from = request.model.clone();
        for model in chain {
            let Err(err) = &last else { break };
            if !worth_falling_back(err.kind) {
                break;
            }
            events(StreamEvent::FallingBack {
                from: from.clone(),
                to: model.clone(),
                error: err.message.clone(),
            });
            let (provider, name) = match self.provider_of(model) {
                Ok(known) => known,
                Err(err) => {
                    last = Err(err);
                    break;
                }
            };
            let retry = Request {
                model: name,
                ..request.clone()
            };
            last = provider.complete(&retry, events).await;
            from.clone_from(model);
        }
        last
    }
}
