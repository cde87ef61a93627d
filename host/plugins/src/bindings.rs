//! Host bindings for the `kaizen:plugin` contract, generated from `wit/`.
//!
//! The newest version (0.1.2) is the host's: its imports serve components
//! of every 0.1.x version (wasmtime links imports by semver, and they have
//! not changed since 0.1.0), and so does its `tools` export. Only the
//! `hooks` export changed, in 0.1.1; [`v0_1_0`] calls the hooks of
//! components built against 0.1.0. The unstable `llm` and `planning` are
//! left out (no feature is switched on): the host provides neither.

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.2",
    world: "plugin",
    imports: { default: async },
    exports: { default: async },
});

pub use exports::kaizen::plugin::hooks as guest_hooks;
pub use exports::kaizen::plugin::tools as guest_tools;
pub use kaizen::plugin::{agent, interaction, log, parallel, process, session, types};

/// The `hooks` export of contract 0.1.0, whose events and decisions were
/// fewer.
pub mod v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../../wit/v0.1.0",
        world: "hook",
        imports: { default: async },
        exports: { default: async },
    });

    pub use exports::kaizen::plugin::hooks as guest_hooks;
}
