//! The plugin host: one engine, the compile cache, and loading a plugin
//! from its source into something callable.

use crate::cache::{CacheOutcome, ComponentCache};
use crate::caps::{EffectiveGrant, HostServices, LoadContext, LoadedCaps, ProtectedPaths};
use crate::component_hook::{ComponentHook, HookSettings};
use crate::component_planner::ComponentPlanner;
use crate::component_tool::{ComponentTool, convert_spec};
use crate::contract_versions::PLANNING_SINCE;
use crate::discovery::{PluginSource, Precompiled};
use crate::grant::GrantPolicy;
use crate::instance::PluginInstances;
use crate::interaction::{Interaction, NoUser};
use crate::linking::{at_least, check_imports, linker_for};
use crate::manifest::{CONTRACT_VERSION, Manifest, PluginKind, SUPPORTED_CONTRACTS};
use crate::pinning::{Integrity, SignaturePolicy};
use crate::source::{SourceParts, Wasm, read_source};
use crate::state::PluginIdentity;
use crate::wasm_engine::{EngineOptions, PluginEngine};
use kaizen_hooks::{Hook, Subscription};
use kaizen_planning::Planner;
use kaizen_sandbox::Containment;
use kaizen_tools::{Tool, ToolSpec};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime::component::{Component, InstancePre};

/// How to build a [`PluginHost`].
pub struct HostOptions {
    /// Where compiled components are kept; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
    /// Engine settings.
    pub engine: EngineOptions,
    /// Who answers `interaction` calls.
    pub interaction: Arc<dyn Interaction>,
    /// What every program of the session is confined by (the `process`
    /// import's sandbox is made from it and each plugin's grant).
    pub sandbox: Containment,
    /// What plugins' file access may not touch, even inside their grant.
    pub protected: ProtectedPaths,
    /// Which signatures plugins' components need.
    pub signatures: SignaturePolicy,
}

impl Default for HostOptions {
    fn default() -> Self {
        Self {
            cache_dir: None,
            engine: EngineOptions::default(),
            interaction: Arc::new(NoUser),
            sandbox: Containment::default(),
            protected: ProtectedPaths::default(),
            signatures: SignaturePolicy::default(),
        }
    }
}

/// Loads plugins and runs them.
pub struct PluginHost {
    engine: PluginEngine,
    cache: Option<ComponentCache>,
    services: HostServices,
    signatures: SignaturePolicy,
}

/// A plugin that loaded: its manifest, grant, tools and instances.
pub struct LoadedPlugin {
    /// The parsed manifest.
    pub manifest: Manifest,
    /// Where it came from.
    pub source: PluginSource,
    /// What it may use, and what it was refused.
    pub grant: Arc<EffectiveGrant>,
    /// How the component was obtained this time.
    pub cache: CacheOutcome,
    /// Its tools, as the component declared them.
    pub tools: Vec<ToolSpec>,
    /// True when what its tools can do stays inside the grant: no HTTP, and
    /// programs (if any) without network in the full OS sandbox.
    pub contained: bool,
    /// Its hook subscriptions, for a plugin of kind `hook`.
    pub hook_subscriptions: Vec<Subscription>,
    /// The lock that pins it and the key that signed it.
    pub integrity: Integrity,
    /// The `kaizen:plugin` version the component was built against, read
    /// from its exports.
    pub contract: String,
    instances: Arc<PluginInstances>,
}

impl LoadedPlugin {
    /// Callable tools, one per spec.
    pub fn tool_handles(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .iter()
            .map(|spec| {
                // The manifest was checked at load, so its subjects parse.
                let subject = self.manifest.rule_subject(&spec.name).ok().flatten();
                let tool = ComponentTool::new(
                    spec.clone(),
                    self.instances.clone(),
                    subject,
                    self.contained,
                );
                Arc::new(tool) as Arc<dyn Tool>
            })
            .collect()
    }

    /// The plugin as a planner; `None` unless it is of kind `planner`.
    pub fn planner_handle(&self) -> Option<Arc<dyn Planner>> {
        if !self.manifest.plugin.kinds.contains(&PluginKind::Planner) {
            return None;
        }
        Some(Arc::new(ComponentPlanner::new(self.instances.clone())))
    }

    /// The plugin as a hook, run as `settings` say; `None` unless it is of
    /// kind `hook`.
    pub fn hook_handle(&self, settings: HookSettings) -> Option<Arc<dyn Hook>> {
        if !self.manifest.plugin.kinds.contains(&PluginKind::Hook) {
            return None;
        }
        let hook = ComponentHook::new(
            self.instances.clone(),
            self.hook_subscriptions.clone(),
            settings,
        );
        Some(Arc::new(hook))
    }

    /// Releases what the plugin keeps for `session` (a stateful instance).
    pub fn end_session(&self, session: &str) {
        self.instances.end_session(session);
    }
}

/// Why a plugin did not load; `message` says what to fix.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// The plugin's name when the manifest got that far.
    pub name: Option<String>,
    /// What went wrong.
    pub message: String,
    /// The manifest, when it parsed (listings show the request).
    pub manifest: Option<Box<Manifest>>,
    /// The effective grant, when it was computed.
    pub grant: Option<Arc<EffectiveGrant>>,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl PluginHost {
    /// Builds the engine and opens the cache.
    pub fn new(options: HostOptions) -> anyhow::Result<Self> {
        let engine = PluginEngine::new(&options.engine)?;
        let cache = options
            .cache_dir
            .map(|dir| ComponentCache::new(&dir, engine.compatibility_key()))
            .transpose()?;
        Ok(Self {
            engine,
            cache,
            services: HostServices {
                interaction: options.interaction,
                sandbox: options.sandbox,
                protected: options.protected,
            },
            signatures: options.signatures,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &PluginEngine {
        &self.engine
    }

    /// What every program of the session runs under (Kaizen's state
    /// hidden, configuration protected).
    pub fn sandbox(&self) -> &Containment {
        &self.services.sandbox
    }

    /// The compile cache, when one is configured.
    pub fn cache(&self) -> Option<&ComponentCache> {
        self.cache.as_ref()
    }

    /// Compiles `wasm` (or takes it from the cache).
    pub fn component(
        &self,
        wasm: &[u8],
        hash: &blake3::Hash,
        label: &str,
    ) -> Result<(Component, CacheOutcome), String> {
        self.component_from(&Wasm::Bytes(Cow::Borrowed(wasm)), hash, label)
    }

    /// The component whose BLAKE3 is `hash`, from the cache, or compiled
    /// from `wasm` (read from disk only then).
    fn component_from(
        &self,
        wasm: &Wasm<'_>,
        hash: &blake3::Hash,
        label: &str,
    ) -> Result<(Component, CacheOutcome), String> {
        let engine = self.engine.engine();
        let bytes = || -> anyhow::Result<Cow<'_, [u8]>> {
            let bytes = wasm.bytes()?;
            check_component_bytes(&bytes, label).map_err(NotAComponent)?;
            Ok(bytes)
        };
        let result = match &self.cache {
            Some(cache) => cache.load(engine, hash, bytes),
            None => bytes().and_then(|wasm| {
                Component::new(engine, &wasm)
                    .map(|c| (c, CacheOutcome::Uncached))
                    .map_err(anyhow::Error::from)
            }),
        };
        result.map_err(|err| match err.downcast_ref::<NotAComponent>() {
            Some(_) => format!("{err:#}"),
            None => format!("{label} is not a valid component: {err:#}"),
        })
    }

    /// The component (whose BLAKE3 is `hash`) compiled into the binary at
    /// build time, when this engine can run its code: from the compile
    /// cache, where its code is kept once unpacked; `None` sends the caller
    /// to [`Self::component`].
    fn precompiled(
        &self,
        precompiled: Precompiled,
        hash: &blake3::Hash,
        label: &str,
    ) -> Option<Component> {
        if precompiled.compatibility_key != self.engine.compatibility_key() {
            tracing::debug!(
                "{label}: precompiled for engine {}, this one is {}; compiling it",
                precompiled.compatibility_key,
                self.engine.compatibility_key()
            );
            return None;
        }
        let engine = self.engine.engine();
        let code = || precompiled.code.bytes().map_err(anyhow::Error::from);
        // SAFETY: the code was produced by `precompile_component` of an
        // engine with this compatibility key for the component `hash` when
        // the binary was built, and lives in the binary itself, which
        // nothing at run time can write.
        let loaded = unsafe {
            match &self.cache {
                Some(cache) => cache
                    .load_compiled(engine, hash, code)
                    .map(|(component, _)| component),
                None => code().and_then(|code| Ok(Component::deserialize(engine, &code)?)),
            }
        };
        match loaded {
            Ok(component) => Some(component),
            Err(err) => {
                tracing::warn!(
                    "{label}: the precompiled code does not load ({err:#}); compiling it"
                );
                None
            }
        }
    }

    /// Loads one plugin under `policy`.
    pub async fn load(
        &self,
        source: &PluginSource,
        policy: &GrantPolicy,
    ) -> Result<LoadedPlugin, LoadError> {
        let SourceParts {
            manifest,
            wasm,
            hash,
            label,
            precompiled,
            integrity,
        } = read_source(source, self.cache.as_ref(), &self.signatures).map_err(|err| {
            LoadError {
                name: err.manifest.as_ref().map(|m| m.plugin.name.clone()),
                message: err.message,
                manifest: err.manifest,
                grant: None,
            }
        })?;
        let name = manifest.plugin.name.clone();
        let (grant, env) = admit(policy, source, &manifest)?;
        let fail = |message: String| LoadError {
            name: Some(name.clone()),
            message,
            manifest: Some(Box::new(manifest.clone())),
            grant: Some(grant.clone()),
        };
        let built = precompiled.and_then(|code| self.precompiled(code, &hash, &label));
        let (component, cache) = match built {
            Some(component) => (component, CacheOutcome::Precompiled),
            None => self.component_from(&wasm, &hash, &label).map_err(fail)?,
        };
        let (pre, contract) = self
            .prepare(&name, &component, &manifest, &grant)
            .map_err(fail)?;
        let caps = LoadedCaps::load(&LoadContext {
            plugin: &name,
            grant: &grant,
            env: &env,
            host: &self.services,
        });
        let identity = PluginIdentity {
            name: name.clone().into(),
            grant: grant.clone(),
            env,
            caps,
        };
        let instances = PluginInstances::new(identity, pre, manifest.plugin.stateful);
        let (tools, hook_subscriptions) = declared(&instances, &manifest).await.map_err(fail)?;
        Ok(LoadedPlugin {
            source: source.clone(),
            contained: grant.contained(&self.services.sandbox),
            manifest,
            grant,
            cache,
            tools,
            hook_subscriptions,
            integrity,
            contract,
            instances,
        })
    }

    /// Checks `component`'s imports against `grant` and its exports against
    /// the manifest, and links it; with the contract version it was built
    /// against.
    fn prepare(
        &self,
        name: &str,
        component: &Component,
        manifest: &Manifest,
        grant: &EffectiveGrant,
    ) -> Result<(InstancePre<crate::state::PluginState>, String), String> {
        let engine = self.engine.engine();
        check_imports(name, engine, component, grant)?;
        let contract = check_exports(name, engine, component, &manifest.plugin.kinds)?;
        let linker = linker_for(engine, grant)
            .map_err(|err| format!("plugin `{name}`: cannot prepare its imports: {err:#}"))?;
        let pre = linker.instantiate_pre(component).map_err(|err| {
            format!("plugin `{name}` imports something Kaizen does not provide: {err:#}")
        })?;
        Ok((pre, contract))
    }
}

/// A plugin's environment variables, names and values.
type Environment = Vec<(String, String)>;

/// The effective grant of the plugin of `manifest` under `policy`, settled
/// by its capabilities (credentials refused, its data directory made), and
/// its environment: the variables granted, then those capabilities set.
fn admit(
    policy: &GrantPolicy,
    source: &PluginSource,
    manifest: &Manifest,
) -> Result<(Arc<EffectiveGrant>, Environment), LoadError> {
    let name = &manifest.plugin.name;
    let mut grant = policy.effective(
        name,
        source.origin,
        &manifest.capabilities,
        &manifest.limits,
    );
    let mut env = Vec::new();
    grant.admit(name, &mut env).map_err(|message| LoadError {
        name: Some(name.clone()),
        message,
        manifest: Some(Box::new(manifest.clone())),
        grant: None,
    })?;
    env.extend(grant.capability_env());
    Ok((Arc::new(grant), env))
}

/// The tools and hook subscriptions the component declares, for the kinds
/// its manifest names.
async fn declared(
    instances: &PluginInstances,
    manifest: &Manifest,
) -> Result<(Vec<ToolSpec>, Vec<Subscription>), String> {
    let name = &manifest.plugin.name;
    let mut tools = Vec::new();
    if manifest.plugin.kinds.contains(&PluginKind::Tool) {
        let specs = instances
            .list_tools()
            .await
            .map_err(|err| format!("listing the tools failed: {}", err.message))?;
        for spec in specs {
            tools.push(convert_spec(name, spec)?);
        }
        tools = manifest.leveled(tools)?;
    }
    let mut hook_subscriptions = Vec::new();
    if manifest.plugin.kinds.contains(&PluginKind::Hook) {
        hook_subscriptions = instances
            .hook_subscriptions()
            .await
            .map_err(|err| format!("asking for its hook subscriptions failed: {err}"))?;
    }
    Ok((tools, hook_subscriptions))
}

/// A file that is not a component, with advice that fits what it is (the
/// message stands on its own).
#[derive(Debug)]
struct NotAComponent(String);

impl std::fmt::Display for NotAComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAComponent {}

/// Catches files that are not components before the compiler does, with
/// advice that fits what the file is.
fn check_component_bytes(wasm: &[u8], label: &str) -> Result<(), String> {
    const COMPONENT_LAYER: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        return Err(format!(
            "{label} is not WebAssembly at all (no `\\0asm` header); point `component` in plugin.toml at the built .wasm file"
        ));
    }
    if wasm[4..8] != COMPONENT_LAYER {
        return Err(format!(
            "{label} is a core WebAssembly module, not a component; build it for the wasm32-wasip2 target, or wrap it with `wasm-tools component new`"
        ));
    }
    Ok(())
}

/// Checks that the component exports what its manifest's kinds promise,
/// in a contract version this host supports (for a planner, one since
/// `planning` is stable); returns that version (the component's own word,
/// whatever its manifest says).
fn check_exports(
    plugin: &str,
    engine: &wasmtime::Engine,
    component: &Component,
    kinds: &[PluginKind],
) -> Result<String, String> {
    let exports: Vec<String> = component
        .component_type()
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    for kind in kinds {
        let wanted = kind.export_interface();
        let found = exports.iter().any(|name| {
            name.split_once('@').is_some_and(|(interface, version)| {
                interface == wanted && SUPPORTED_CONTRACTS.contains(&version)
            })
        });
        if !found {
            let listed = if exports.is_empty() {
                "nothing".to_string()
            } else {
                exports.join(", ")
            };
            return Err(format!(
                "plugin `{plugin}` declares kind `{kind}` but its component does not export {wanted} in a version this Kaizen supports ({}; it exports {listed}); build it from the `{kind}` world of wit/v{CONTRACT_VERSION}",
                SUPPORTED_CONTRACTS.join(", ")
            ));
        }
        if *kind == PluginKind::Planner
            && let Some(draft) = exports.iter().find_map(|name| {
                let version = name.strip_prefix("kaizen:plugin/planning@")?;
                (!at_least(version, PLANNING_SINCE)).then_some(name)
            })
        {
            return Err(format!(
                "plugin `{plugin}` exports `{draft}`, a draft of the planning interface that no Kaizen calls; rebuild it from the `planner` world of wit/v{CONTRACT_VERSION}"
            ));
        }
    }
    let version = exports
        .iter()
        .filter_map(|name| name.strip_prefix("kaizen:plugin/"))
        .filter_map(|rest| rest.split_once('@').map(|(_, version)| version))
        .find(|version| SUPPORTED_CONTRACTS.contains(version))
        .unwrap_or(CONTRACT_VERSION);
    Ok(version.to_string())
}
