//! What a plugin is linked against: WASI (its filesystem behind the
//! plugin's guard), the interfaces every plugin gets, and those of the
//! capabilities its grant includes. Imports are checked before
//! instantiation so that a missing capability is a load error that names
//! it, never a trap at call time.

use crate::always::{self, ALWAYS_LINKED};
use crate::caps::{EffectiveGrant, REGISTRY, filesystem, link_each};
use crate::manifest::{CONTRACT_VERSION, SUPPORTED_CONTRACTS};
use crate::state::PluginState;
use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker};

/// The prefix of the contract's interfaces.
const KAIZEN: &str = "kaizen:plugin/";

/// The linker for a plugin with `grant`.
pub(crate) fn linker_for(
    engine: &Engine,
    grant: &EffectiveGrant,
) -> anyhow::Result<Linker<PluginState>> {
    let mut linker = Linker::new(engine);
    // Sockets and name lookup are linked but denied by the WASI context:
    // the network is reachable only through the filtered wasi:http.
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    filesystem::link_guarded(&mut linker)?;
    always::link(&mut linker)?;
    link_each(&mut linker, |entry| (entry.granted)(grant))?;
    Ok(linker)
}

/// A capability an import needs, and whether this host implements it.
struct Needed {
    capability: &'static str,
    granted: bool,
    implemented: bool,
}

fn needed_for(import: &str, grant: &EffectiveGrant) -> Option<Needed> {
    let (interface, version) = import.split_once('@').unwrap_or((import, ""));
    let entry = REGISTRY
        .iter()
        .find(|entry| entry.imports.contains(&interface))?;
    Some(Needed {
        capability: entry.name,
        granted: (entry.granted)(grant),
        implemented: entry.since.is_none_or(|since| at_least(version, since)),
    })
}

/// True when dotted version `version` is `least` or later.
pub(crate) fn at_least(version: &str, least: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    parts(version) >= parts(least)
}

/// Checks every import of `component` against `grant`; the error names
/// the first capability that is missing and says how to get it.
pub(crate) fn check_imports(
    plugin: &str,
    engine: &Engine,
    component: &Component,
    grant: &EffectiveGrant,
) -> Result<(), String> {
    for (import, _) in component.component_type().imports(engine) {
        if let Some(version) = import
            .strip_prefix(KAIZEN)
            .and_then(|rest| rest.split_once('@'))
            .map(|(_, version)| version)
            && !SUPPORTED_CONTRACTS.contains(&version)
        {
            return Err(format!(
                "plugin `{plugin}` imports `{import}`, but this Kaizen provides kaizen:plugin@{}; rebuild the plugin against wit/v{CONTRACT_VERSION}",
                SUPPORTED_CONTRACTS.join(", @")
            ));
        }
        let Some(needed) = needed_for(import, grant) else {
            continue;
        };
        if !needed.granted {
            return Err(format!(
                "plugin `{plugin}` imports `{import}`, which needs the `{cap}` capability, and it was not granted. Request it under [capabilities] in the plugin's plugin.toml and grant it under [grants.{plugin}] in kaizen.toml (`kaizen plugins list` shows what each plugin requested and got)",
                cap = needed.capability
            ));
        }
        if !needed.implemented {
            return Err(format!(
                "plugin `{plugin}` imports `{import}` (the `{cap}` capability), an unstable draft that this version of Kaizen does not provide, so the plugin cannot be loaded; rebuild it against wit/v{CONTRACT_VERSION}",
                cap = needed.capability
            ));
        }
    }
    Ok(())
}

/// The linker for inspecting `component` without granting it anything:
/// WASI and the interfaces every plugin gets; capabilities' WASI
/// interfaces it imports (`wasi:http`) with an empty grant; and its other
/// kaizen imports (`process`, `agent`, `llm`, ...) with functions that trap
/// when called. WASI stays linked for real: stubbing it by name would
/// shadow the linker's semver-compatible versions.
pub(crate) fn inspection_linker(
    engine: &Engine,
    component: &Component,
) -> anyhow::Result<Linker<PluginState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    always::link(&mut linker)?;
    let imports: Vec<(String, ComponentItem)> = component
        .component_type()
        .imports(engine)
        .map(|(name, item)| (name.to_string(), item.ty))
        .collect();
    let imported = |interface: &str| {
        imports
            .iter()
            .any(|(name, _)| name.split_once('@').map_or(name.as_str(), |(i, _)| i) == interface)
    };
    link_each(&mut linker, |entry| {
        let wasi = entry.imports.iter().any(|i| !i.starts_with(KAIZEN));
        wasi && entry.imports.iter().any(|i| imported(i))
    })?;
    for (import, item) in &imports {
        if let ComponentItem::ComponentInstance(instance) = item
            && import.starts_with(KAIZEN)
            && !ALWAYS_LINKED.contains(&import.split_once('@').map_or(import.as_str(), |(i, _)| i))
        {
            stub(&mut linker, engine, import, instance)?;
        }
    }
    Ok(linker)
}

/// Links every function of `instance` as one that traps when called.
fn stub(
    linker: &mut Linker<PluginState>,
    engine: &Engine,
    import: &str,
    instance: &wasmtime::component::types::ComponentInstance,
) -> anyhow::Result<()> {
    let mut stub = linker.instance(import)?;
    for (name, export) in instance.exports(engine) {
        if let ComponentItem::ComponentFunc(_) = export.ty {
            let what = format!("{import}#{name}");
            stub.func_new(name, move |_, _, _, _| {
                wasmtime::bail!("{what} is not available while a component is inspected")
            })?;
        }
    }
    Ok(())
}
