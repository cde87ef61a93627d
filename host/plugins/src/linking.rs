//! What a plugin is linked against: only the interfaces its grant includes.
//! Imports are checked before instantiation so that a missing capability
//! is a load error that names it, never a trap at call time.

use crate::bindings::{agent, interaction, llm, log, parallel, process, session, types};
use crate::grant::EffectiveGrant;
use crate::guarded_fs::HasGuardedFs;
use crate::manifest::{CONTRACT_VERSION, SUPPORTED_CONTRACTS};
use crate::state::PluginState;
use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, HasSelf, Linker};

/// The linker for a plugin with `grant`.
pub(crate) fn linker_for(
    engine: &Engine,
    grant: &EffectiveGrant,
) -> anyhow::Result<Linker<PluginState>> {
    let mut linker = Linker::new(engine);
    // Sockets and name lookup are linked but denied by the WASI context:
    // the network is reachable only through the filtered wasi:http.
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    // Files go through the plugin's guard: wasmtime-wasi's filesystem types,
    // defined again over its own.
    linker.allow_shadowing(true);
    wasmtime_wasi::p2::bindings::filesystem::types::add_to_linker::<_, HasGuardedFs>(
        &mut linker,
        PluginState::guarded_fs,
    )?;
    linker.allow_shadowing(false);
    if !grant.http.is_empty() {
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    }
    types::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    log::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    // Always granted: it reaches only the notes of the call's own session.
    session::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    if grant.interaction {
        interaction::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    }
    if grant.process.is_some() {
        process::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    }
    if grant.agent {
        agent::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    }
    if grant.parallel {
        parallel::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    }
    if grant.llm {
        llm::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
    }
    Ok(linker)
}

/// A capability an import needs, and whether this host implements it.
struct Needed {
    capability: &'static str,
    granted: bool,
    implemented: bool,
}

/// The first contract version whose `llm` the host provides; before it,
/// `llm` was an unstable draft.
const LLM_SINCE: &str = "0.1.3";

fn needed_for(import: &str, grant: &EffectiveGrant) -> Option<Needed> {
    let (interface, version) = import.split_once('@').unwrap_or((import, ""));
    let need = |capability, granted, implemented| {
        Some(Needed {
            capability,
            granted,
            implemented,
        })
    };
    match interface {
        "kaizen:plugin/interaction" => need("interaction", grant.interaction, true),
        "kaizen:plugin/process" => need("process", grant.process.is_some(), true),
        "kaizen:plugin/agent" => need("agent", grant.agent, true),
        "kaizen:plugin/llm" => need("llm", grant.llm, at_least(version, LLM_SINCE)),
        "kaizen:plugin/parallel" => need("parallel", grant.parallel, true),
        "wasi:http/outgoing-handler" | "wasi:http/types" => {
            need("http", !grant.http.is_empty(), true)
        }
        _ => None,
    }
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
            .strip_prefix("kaizen:plugin/")
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

/// Links every kaizen interface `component` imports that `linker` lacks
/// (`process`, `agent`, `llm`, ...) with functions that trap when called,
/// so a component can be inspected without granting it anything. WASI
/// stays linked for real: stubbing it by name would shadow the linker's
/// semver-compatible versions.
pub(crate) fn stub_missing_kaizen_imports(
    linker: &mut Linker<PluginState>,
    engine: &Engine,
    component: &Component,
) -> anyhow::Result<()> {
    for (import, item) in component.component_type().imports(engine) {
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        if !import.starts_with("kaizen:plugin/") || linked_interface(import) {
            continue;
        }
        let mut stub = linker.instance(import)?;
        for (name, export) in instance.exports(engine) {
            if let ComponentItem::ComponentFunc(_) = export.ty {
                let what = format!("{import}#{name}");
                stub.func_new(name, move |_, _, _, _| {
                    wasmtime::bail!("{what} is not available while a component is inspected")
                })?;
            }
        }
    }
    Ok(())
}

fn linked_interface(import: &str) -> bool {
    let interface = import.split_once('@').map_or(import, |(i, _)| i);
    matches!(
        interface,
        "kaizen:plugin/types" | "kaizen:plugin/log" | "kaizen:plugin/session"
    )
}
