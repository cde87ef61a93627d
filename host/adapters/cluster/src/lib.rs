//! Kaizen's sessions on Restate, a durable-execution engine.
//!
//! A session is a Restate virtual object keyed by its id ([`worker`]);
//! each user turn is one invocation of its `turn` handler, which runs
//! Kaizen's loop with [`RestateSteps`] as the step executor ([`restate_steps`]).
//! Every model call and tool step is journaled ([`restate_journal`]), so when the
//! worker running it is lost, Restate runs the invocation again on
//! another worker and each finished step comes back from the journal
//! instead of running twice. A question for a person waits on the engine
//! ([`asks`]).
//!
//! The session's own files (its event log, checkpoints and the stream of
//! its events) are in a session store every worker and submitter share;
//! a turn run again first takes the log back to where the turn began.
//! A submitter ([`client`]) sends a turn, follows its events through the
//! stream ([`stream`]) and takes the result from the engine ([`follow`]).

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

pub mod asks;
pub mod client;
pub mod follow;
mod question;
pub mod restate_journal;
pub mod restate_steps;
pub mod stream;
pub mod worker;

pub use asks::{Answer, Asker, Question};
pub use client::{Cluster, Submitted};
pub use follow::{Answerer, Followed, Following, Heard};
pub use restate_journal::serve_steps;
pub use restate_steps::{RestateSteps, StepRequest, Waiting};
pub use stream::{EventStream, Item, StreamReader};
pub use worker::{TurnFuture, TurnRequest, TurnRunner, TurnStart, serve};
