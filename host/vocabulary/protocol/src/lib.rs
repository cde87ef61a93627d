//! Kaizen's shared vocabulary, at the bottom of the crate graph.
//!
//! What a run says as it goes ([`Event`]) and what it ends with
//! ([`RunResult`], [`Status`]); how a tool call is put to the user
//! ([`ApprovalRequest`], [`Approver`]), how much harm a tool can do
//! ([`Danger`]), and under which [`PermissionMode`];
//! and the names a durable-execution engine journals steps under
//! ([`StepKey`]). The loop speaks it, and so do the front ends, the other
//! runtimes' adapters, MCP and the cluster, without depending on the loop
//! itself.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

mod approval;
mod danger;
mod event;
mod mode;
mod result;
mod step;

pub use approval::{Approval, ApprovalFuture, ApprovalRequest, Approver};
pub use danger::{Danger, DangerTier, UnknownDanger};
pub use event::{Event, Observer, Silent};
pub use mode::PermissionMode;
pub use result::{
    DENIED, PassedOver, PermissionDenial, RUNTIME_NAME, RunResult, RuntimeSelection, Status,
    TokensUsed, ToolCallRecord,
};
pub use step::{StepKey, StepKind};
/// How a run is stopped from outside: cancelling the token interrupts it.
pub use tokio_util::sync::CancellationToken;
