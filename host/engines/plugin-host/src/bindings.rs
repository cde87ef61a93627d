//! Host bindings for the `kaizen:plugin` contract, generated from `wit/`.
//!
//! The newest version (the build script finds it in `wit/`) is the host's:
//! its imports serve components of every 0.1.x version (wasmtime links
//! imports by semver, and they have not changed since 0.1.0), and so does
//! its `tools` export. Only the `hooks` export changed, in 0.1.1;
//! [`crate::contract_versions`] calls the hooks of components built against
//! 0.1.0 through that version's bindings. `llm` is stable since 0.1.3
//! (older versions' drafts are refused at load time), and `planning` since
//! 0.1.4 (a planner of an older version is refused).

// `bindgen!` of the `plugin` world of the newest `wit/vX.Y.Z`.
include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

pub use exports::kaizen::plugin::hooks as guest_hooks;
pub use exports::kaizen::plugin::planning as guest_planning;
pub use exports::kaizen::plugin::tools as guest_tools;
pub use kaizen::plugin::{agent, interaction, llm, log, parallel, process, session, types};
