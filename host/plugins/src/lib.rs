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

mod bindings;
mod cache;
mod capability;
mod component_hook;
mod component_planner;
mod component_tool;
mod discovery;
mod engine;
mod fan_out;
mod fs_guard;
mod grant;
mod guarded_fs;
mod hook_versions;
mod host;
mod host_imports;
mod http_credential;
mod http_policy;
mod http_rule;
mod inspect;
pub mod interaction;
mod linking;
mod llm_host;
mod manifest;
mod outcome;
mod pinning;
mod process_host;
mod runtime;
mod set;
mod source;
mod state;
mod tail_output;
mod verified;

pub use cache::{CacheOutcome, ComponentCache};
pub use capability::{
    Access, Capabilities, FsRule, Limits, ProcessCapability, is_secret_env_name, secret_in_value,
};
pub use component_hook::{ComponentHook, HookSettings};
pub use component_tool::ComponentTool;
pub use discovery::{Location, Origin, PluginSource, Precompiled, plugin_dirs, sources_in};
pub use engine::{EPOCH_TICK, EngineOptions, PluginEngine};
pub use fs_guard::{ProtectedPaths, existing_matches};
pub use grant::{
    DEFAULT_CPU_SECONDS, DEFAULT_MAX_MEMORY_MIB, DEFAULT_MEMORY_MIB, EffectiveGrant,
    EffectiveLimits, GrantPolicy, Preopen,
};
pub use host::{DATA_DIR_ENV, HTTP_ALLOW_ENV, HostOptions, LoadError, LoadedPlugin, PluginHost};
pub use http_credential::HttpCredential;
pub use http_rule::HostPattern;
pub use inspect::{Inspection, inspect};
pub use manifest::{
    CONTRACT_VERSION, MANIFEST_FILE, Manifest, ManifestError, PluginKind, PluginSection,
    SUPPORTED_CONTRACTS, valid_plugin_name,
};
pub use pinning::{
    Digest, Integrity, LOCK_FILE, LockEntry, Pin, PluginLock, SignaturePolicy, TrustedKey,
    signature_path,
};
pub use set::{LoadFailure, PluginSet};
