//! Hooks in the loop: the dispatcher that runs the hooks of an event in
//! priority order and combines their answers, and the payloads the loop
//! hands them. Where hooks come from is not the loop's business: it sees
//! [`kaizen_hooks::Hook`]s.

mod dispatcher;
mod payload;

pub use dispatcher::{DEFAULT_HOOK_TIMEOUT, Dispatch, HookDispatcher, HookReport};
pub(crate) use payload::PayloadBase;
