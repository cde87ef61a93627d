//! Describing a component without granting it anything: its world (imports
//! and exports) and the tools it declares.

use crate::bindings::guest_tools;
use crate::caps::{EffectiveGrant, HostServices, LoadContext, LoadedCaps, ProtectedPaths};
use crate::component_tool::convert_spec;
use crate::host::PluginHost;
use crate::manifest::{MANIFEST_FILE, Manifest};
use crate::state::{PluginIdentity, PluginState};
use kaizen_sandbox::Containment;
use kaizen_tools::ToolSpec;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use wasmtime::Store;

/// What `kaizen plugins inspect` shows.
#[derive(Debug, Serialize)]
pub struct Inspection {
    /// The component file.
    pub component: String,
    /// The manifest, when the path was a plugin directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<serde_json::Value>,
    /// Interfaces the component imports.
    pub imports: Vec<String>,
    /// Interfaces the component exports.
    pub exports: Vec<String>,
    /// Its tools, when it exports `kaizen:plugin/tools`.
    pub tools: Vec<ToolSpec>,
    /// Why the tools could not be listed, when they could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools_error: Option<String>,
}

/// Inspects a plugin directory or a `.wasm` file. The component runs with
/// no grant at all: imports beyond WASI and `log` trap if called.
pub async fn inspect(host: &PluginHost, path: &Path) -> Result<Inspection, String> {
    let (manifest, wasm_path) = if path.is_dir() {
        let manifest = Manifest::load(path).map_err(|e| e.to_string())?;
        let wasm_path = manifest.component_path(path);
        (Some(manifest), wasm_path)
    } else if path.is_file() {
        (None, path.to_path_buf())
    } else {
        return Err(format!(
            "{} does not exist; give a plugin directory (with {MANIFEST_FILE}) or a .wasm file",
            path.display()
        ));
    };
    let wasm = std::fs::read(&wasm_path)
        .map_err(|err| format!("cannot read {}: {err}", wasm_path.display()))?;
    let label = wasm_path.display().to_string();
    let (component, _) = host.component(&wasm, &blake3::hash(&wasm), &label)?;
    let engine = host.engine().engine();
    let ty = component.component_type();
    let imports = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
    let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let name = manifest
        .as_ref()
        .map_or("inspected".to_string(), |m| m.plugin.name.clone());
    let (tools, tools_error) = if exports
        .iter()
        .any(|e| e.starts_with("kaizen:plugin/tools@"))
    {
        let listed = list_tools(host, &component, &name).await;
        let leveled = match &manifest {
            Some(manifest) => listed.and_then(|tools| manifest.leveled(tools)),
            None => listed,
        };
        match leveled {
            Ok(tools) => (tools, None),
            Err(err) => (Vec::new(), Some(err)),
        }
    } else {
        (Vec::new(), None)
    };
    Ok(Inspection {
        component: label,
        manifest: manifest.map(|m| manifest_json(&m)),
        imports,
        exports,
        tools,
        tools_error,
    })
}

async fn list_tools(
    host: &PluginHost,
    component: &wasmtime::component::Component,
    name: &str,
) -> Result<Vec<ToolSpec>, String> {
    let engine = host.engine().engine();
    let linker = crate::linking::inspection_linker(engine, component).map_err(|e| e.to_string())?;
    let grant = Arc::new(EffectiveGrant::default());
    // No grant, no user, nothing protected: nothing is preopened.
    let services = HostServices {
        interaction: Arc::new(crate::interaction::NoUser),
        sandbox: Containment::default(),
        protected: ProtectedPaths::default(),
    };
    let caps = LoadedCaps::load(&LoadContext {
        plugin: name,
        grant: &grant,
        env: &[],
        host: &services,
    });
    let identity = PluginIdentity {
        name: name.into(),
        grant,
        env: Vec::new(),
        caps,
    };
    let state = PluginState::new(&identity, None).map_err(|e| e.to_string())?;
    let mut store = Store::new(engine, state);
    store.set_epoch_deadline(crate::wasm_engine::PluginEngine::ticks_for(
        identity.grant.limits.cpu_time,
    ));
    let pre = linker
        .instantiate_pre(component)
        .map_err(|e| e.to_string())?;
    let indices = guest_tools::GuestIndices::new(&pre).map_err(|e| e.to_string())?;
    let instance = pre
        .instantiate_async(&mut store)
        .await
        .map_err(|e| format!("instantiation failed: {e:#}"))?;
    let tools = indices
        .load(&mut store, &instance)
        .map_err(|e| e.to_string())?;
    let specs = tools
        .call_tools(&mut store)
        .await
        .map_err(|e| format!("tools() failed: {e:#}"))?;
    specs
        .into_iter()
        .map(|spec| convert_spec(name, spec))
        .collect()
}

fn manifest_json(manifest: &Manifest) -> serde_json::Value {
    serde_json::json!({
        "name": manifest.plugin.name,
        "version": manifest.plugin.version,
        "description": manifest.plugin.description,
        "contract": manifest.plugin.contract,
        "kinds": manifest.plugin.kinds,
        "stateful": manifest.plugin.stateful,
        "capabilities": manifest.capabilities,
        "limits": manifest.limits,
    })
}
