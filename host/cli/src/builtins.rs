//! The built-in plugins, embedded in the binary by the build script from
//! `plugins/`. They load through the same path as any third-party plugin:
//! manifest, grant, import check, instance per call.

use kaizen_plugins::{Location, Origin, PluginSource};

/// `(name, plugin.toml, component, BLAKE3 of the component)` per built-in.
type Embedded = (&'static str, &'static str, &'static [u8], [u8; 32]);

const BUILTINS: &[Embedded] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// A source for every built-in plugin.
pub fn sources() -> Vec<PluginSource> {
    BUILTINS
        .iter()
        .map(|&(name, manifest, wasm, hash)| PluginSource {
            origin: Origin::Builtin,
            location: Location::Embedded {
                name,
                manifest,
                wasm,
                hash,
            },
        })
        .collect()
}
