//! The stages of a run, each a function (or, for the planner, a small
//! struct) of the [`crate::turn::Turn`] the run's stages share; the
//! driver (`run.rs`) calls them in order.

pub(crate) mod act;
pub(crate) mod compact;
pub(crate) mod complete;
pub(crate) mod plan;
pub(crate) mod stop;
pub(crate) mod sub_agent;
pub(crate) mod summary;
pub(crate) mod think;
pub(crate) mod user_messages;
