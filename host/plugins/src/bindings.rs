//! Host bindings for the `kaizen:plugin` contract, generated from `wit/`.

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.0",
    world: "plugin",
    imports: { default: async },
    exports: { default: async },
});

pub use exports::kaizen::plugin::hooks as guest_hooks;
pub use exports::kaizen::plugin::tools as guest_tools;
pub use kaizen::plugin::{agent, interaction, log, parallel, process, session, types};
