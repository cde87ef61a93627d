//! The wasmtime settings that shape compiled plugin code, in one place.
//!
//! The plugin host builds its engine from [`config`], and the `kaizen`
//! build script precompiles the built-in plugins with an engine built from
//! the same function, so that a fresh `KAIZEN_HOME` starts without
//! compiling anything. [`compatibility_key`] says whether code compiled by
//! one engine may be loaded by another: the instance allocator (pooling or
//! on demand) is left out of [`config`] because it does not change
//! compiled code.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used)]

use std::hash::{Hash, Hasher};
use wasmtime::{Config, Engine};

/// The engine settings, without an instance allocation strategy.
pub fn config() -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.parallel_compilation(true);
    // Deep recursion must trap cleanly rather than exhaust the host stack.
    config.max_wasm_stack(1 << 20);
    config.async_stack_size(2 << 20);
    // Compiled code without what only outside tools read: native unwind
    // tables (wasmtime walks wasm frames itself, for traps and
    // backtraces) and the map from machine code back to wasm offsets (a
    // trap still names its function). The built-ins' compiled code is
    // embedded in the binary: both were a seventh of it (Grep's 4.37 MB,
    // 3.78 MB without), 0.9 MB of the binary once packed.
    config.native_unwind_info(false);
    config.generate_address_map(false);
    config
}

/// A stable identifier of everything that makes compiled code compatible
/// with `engine`: the wasmtime version, the target and its CPU features,
/// and the settings that shape code.
pub fn compatibility_key(engine: &Engine) -> String {
    // SipHash with fixed keys: the same in every process of one build.
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Compiles components ahead of time for engines built from [`config`].
pub struct Precompiler {
    engine: Engine,
}

impl Precompiler {
    /// An engine from [`config`] that only compiles.
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            engine: Engine::new(&config())?,
        })
    }

    /// The [`compatibility_key`] of what this compiles.
    pub fn compatibility_key(&self) -> String {
        compatibility_key(&self.engine)
    }

    /// The compiled form of the component `wasm`, for
    /// `Component::deserialize` on an engine with the same key.
    pub fn precompile(&self, wasm: &[u8]) -> anyhow::Result<Vec<u8>> {
        Ok(self.engine.precompile_component(wasm)?)
    }
}
