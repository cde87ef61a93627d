//! Kaizen's plugin host.
//!
//! Loads WASI 0.2 components from plugin directories (or the binary's
//! built-ins) and runs them with exactly the capabilities they were granted:
//! the manifest (`plugin.toml`) requests, the operator's [`GrantPolicy`]
//! grants, and the effective grant is the intersection. A component that
//! imports an interface outside its grant is refused at load time with a
//! message naming the capability.
//!
//! This crate knows nothing of the agent loop: it hands out
//! [`kaizen_tools::Tool`]s and nothing else.

mod always;
mod atomic_write;
mod bindings;
mod cache;
mod call;
mod caps;
mod clock;
mod component_hook;
mod component_planner;
mod component_tool;
mod contract_versions;
mod discovery;
mod grant;
mod hook_convert;
mod host;
mod inspect;
mod instance;
mod limits;
mod linking;
mod manifest;
mod origin;
mod outcome;
mod pinning;
mod set;
mod source;
mod state;
mod tail_output;
mod verified;
mod wasm_engine;

pub use cache::{CacheOutcome, ComponentCache};
pub use caps::data_dir::DATA_DIR_ENV;
pub use caps::env::{is_secret_env_name, secret_in_value};
pub use caps::filesystem::{Access, FsRule, Preopen, ProtectedPaths, existing_matches};
pub use caps::http::{HTTP_ALLOW_ENV, HostPattern, HttpCredential};
/// Who answers a plugin's `interaction` calls.
pub use caps::interaction::handler as interaction;
pub use caps::process::ProcessCapability;
pub use caps::{Capabilities, EffectiveGrant};
pub use component_hook::{ComponentHook, HookSettings};
pub use component_tool::ComponentTool;
pub use discovery::{Location, PluginSource, Precompiled, plugin_dirs, sources_in};
pub use grant::GrantPolicy;
pub use host::{HostOptions, LoadError, LoadedPlugin, PluginHost};
pub use inspect::{Inspection, inspect};
pub use limits::{
    DEFAULT_CPU_SECONDS, DEFAULT_MAX_MEMORY_MIB, DEFAULT_MEMORY_MIB, EffectiveLimits, Limits,
};
pub use manifest::{
    CONTRACT_VERSION, MANIFEST_FILE, Manifest, ManifestError, PluginKind, PluginSection,
    SUPPORTED_CONTRACTS, valid_plugin_name,
};
pub use origin::Origin;
pub use pinning::{
    Digest, Integrity, LOCK_FILE, LockEntry, Pin, PluginLock, SignaturePolicy, TrustedKey,
    signature_path,
};
pub use set::{LoadFailure, PluginSet};
pub use wasm_engine::{EPOCH_TICK, EngineOptions, PluginEngine};
