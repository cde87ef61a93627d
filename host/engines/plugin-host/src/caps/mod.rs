//! The host's capabilities, one module each: what a manifest may request,
//! how a grant meets the request, which contract interfaces need it, how
//! they are linked, and what a store keeps for them.
//!
//! Each capability implements [`HostCapability`]; the list in
//! [`registry`] is the only other place that names it. From that list come
//! the public [`Capabilities`] and [`EffectiveGrant`] (a field each), the
//! per-plugin [`LoadedCaps`], the per-call [`CapStates`], and [`REGISTRY`],
//! which load-time import checks and linking iterate over. This follows
//! Spin's factors: one trait per piece of host functionality, and one
//! declaration that generates the structs holding every piece's state.
//!
//! A capability may read another's grant where their effects meet: the
//! sandbox of `process` and the guard of `filesystem` are shaped by the
//! directories granted, and the guard lets a plugin reach its `data-dir`.

#[macro_use]
mod generate;
mod registry;
mod store;

pub(crate) mod agent;
pub(crate) mod data_dir;
pub(crate) mod env;
pub(crate) mod filesystem;
mod flag;
pub(crate) mod http;
pub(crate) mod interaction;
pub(crate) mod llm;
pub(crate) mod parallel;
pub(crate) mod process;

use crate::call::CallSetup;
use crate::interaction::Interaction;
use crate::origin::Origin;
use kaizen_sandbox::Containment;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::Linker;
use wasmtime_wasi::WasiCtxBuilder;

use filesystem::Access;
pub use filesystem::ProtectedPaths;
use http::HttpCredential;
pub(crate) use registry::{CapStates, LoadedCaps, REGISTRY, link_each};
pub use registry::{Capabilities, EffectiveGrant};
pub(crate) use store::{CapStore, CapView, HasCap, Slot};

/// One capability of the plugin host.
///
/// A capability has a request (what a manifest asks for and an operator
/// grants, the same shape), a grant (their intersection), the contract
/// interfaces that need it, state shared by a plugin's stores, and a part
/// of each store's state. Methods with defaults are for capabilities that
/// need them (only `http` sets headers, only `data-dir` a directory).
pub(crate) trait HostCapability: Sized + 'static {
    /// Its key under `[capabilities]` and `[grants.NAME]`, and its name in
    /// listings and load errors.
    const NAME: &'static str;
    /// The interfaces, without version, that a component imports to use
    /// it: importing one without the grant is a load error naming
    /// [`Self::NAME`].
    const IMPORTS: &'static [&'static str] = &[];
    /// The contract version whose interfaces the host provides, when an
    /// older one had an unstable draft that it refuses; `None` when every
    /// version's are provided.
    const SINCE: Option<&'static str> = None;
    /// The variable it sets in the plugin's environment, which the `env`
    /// capability never passes from the host's.
    const ENV_VAR: Option<&'static str> = None;

    /// What a manifest requests and an operator grants.
    type Request: Debug + Clone + Default + PartialEq + Eq + Serialize + DeserializeOwned;
    /// What a plugin may use: request and grant intersected.
    type Grant: Debug + Clone + Default + Serialize;
    /// What every store of a plugin shares, made when the plugin loads.
    type Shared: Send + Sync;
    /// Its part of a store's state ([`CapStates`]).
    type State: Send + 'static;

    /// Checks what serde cannot (path forms, patterns, names).
    fn check(_request: &Self::Request) -> Result<(), String> {
        Ok(())
    }

    /// Two requests together, for layering grants.
    fn union(a: &Self::Request, b: &Self::Request) -> Self::Request;

    /// What every plugin is granted before the operator's grants.
    fn default_grant(_cx: &GrantContext<'_>) -> Self::Request {
        Self::Request::default()
    }

    /// What of `requested` `granted` allows. Refusals and reductions are
    /// pushed to `out.denied`, one line each, starting with
    /// [`Self::NAME`]; `out` holds what the capabilities before this one
    /// in the registry granted.
    fn intersect(
        cx: &GrantContext<'_>,
        requested: &Self::Request,
        granted: &Self::Request,
        out: &mut EffectiveGrant,
    ) -> Self::Grant;

    /// Whether `grant` gives anything, so that its interfaces are linked.
    fn is_granted(grant: &Self::Grant) -> bool;

    /// Whether listings (`--json`) show `grant`.
    fn is_listed(_grant: &Self::Grant) -> bool {
        true
    }

    /// `request` as `kaizen plugins list` shows it, a line per item.
    fn describe_request(request: &Self::Request) -> Vec<String>;

    /// `grant` as `kaizen plugins list` shows it, a line per item.
    fn describe_grant(grant: &Self::Grant) -> Vec<String>;

    /// Whether `grant` lets tools act beyond the plugin's grant, so that
    /// they are not contained (the network, programs outside a full OS
    /// sandbox).
    fn escapes(_grant: &Self::Grant, _sandbox: &Containment) -> bool {
        false
    }

    /// Settles what needs the host's environment or files at load time,
    /// before the grant is fixed; an error stops the plugin loading.
    fn admit(_cx: &mut Admission<'_>) -> Result<(), String> {
        Ok(())
    }

    /// The value of [`Self::ENV_VAR`] for `grant`; `None` leaves it unset.
    fn env_value(_grant: &Self::Grant) -> Option<String> {
        None
    }

    /// Adds its interfaces to a linker; called when the plugin has the
    /// capability.
    fn link<T: CapStore>(_linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        Ok(())
    }

    /// What the plugin's stores share.
    fn load(cx: &LoadContext<'_>) -> Self::Shared;

    /// Its part of a new store, adding what it needs to the WASI context.
    fn new_state(shared: &Self::Shared, cx: &mut StoreContext<'_>) -> anyhow::Result<Self::State>;

    /// Prepares `state` for a call.
    fn begin_call(_state: &mut Self::State, _shared: &Self::Shared, _call: &CallSetup<'_>) {}

    /// What it refused during the call, a sentence each, taken so that
    /// the next call starts with none: a tool's error gets them, since the
    /// guest saw only an error code.
    fn take_refusals(_state: &Self::State) -> Vec<String> {
        Vec::new()
    }

    /// Releases what `shared` keeps for `session`.
    fn end_session(_shared: &Self::Shared, _session: &str) {}
}

/// What intersections and default grants may consult: the parts of the
/// operator's `GrantPolicy` that capabilities read (the policy itself holds
/// capability types, so it is built above them).
pub(crate) struct GrantContext<'a> {
    /// The session's workspace; `$WORKSPACE` in rules resolves to it.
    pub workspace: &'a Path,
    /// Directories added with `--add-dir` or config, granted to every plugin.
    pub extra_dirs: &'a [(PathBuf, Access)],
    /// Where plugins granted `data-dir` get their directory, if the host
    /// keeps plugin data.
    pub data_root: Option<&'a Path>,
    /// Headers the host adds to plugins' requests for given hosts.
    pub http_credentials: &'a [HttpCredential],
    /// The plugin being granted.
    pub plugin: &'a str,
    /// Where the plugin came from.
    pub origin: Origin,
}

/// A plugin's grant and environment while it loads.
pub(crate) struct Admission<'a> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// Its grant, still open to refusals.
    pub grant: &'a mut EffectiveGrant,
    /// The variables passed to it so far.
    pub env: &'a mut Vec<(String, String)>,
    /// Names capabilities set themselves ([`HostCapability::ENV_VAR`]).
    pub reserved_env: &'a [&'static str],
}

/// What a loading plugin's capabilities may use.
pub(crate) struct LoadContext<'a> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// Its effective grant.
    pub grant: &'a EffectiveGrant,
    /// The variables passed to it.
    pub env: &'a [(String, String)],
    /// What the host provides.
    pub host: &'a HostServices,
}

/// What the host provides to every plugin's capabilities.
#[derive(Clone)]
pub(crate) struct HostServices {
    /// Who answers `interaction` calls.
    pub interaction: Arc<dyn Interaction>,
    /// What every program of the session is confined by.
    pub sandbox: Containment,
    /// What plugins' file access may not touch.
    pub protected: ProtectedPaths,
}

/// What a new store's capability states may use.
pub(crate) struct StoreContext<'a> {
    /// The plugin's name.
    pub plugin: &'a Arc<str>,
    /// Its effective grant.
    pub grant: &'a EffectiveGrant,
    /// The WASI context being built.
    pub wasi: &'a mut WasiCtxBuilder,
    /// The directory of the store's first call, if any.
    pub cwd: Option<&'a Path>,
}

/// True when `value` is its type's default: what a request leaves out of
/// its serialized form.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// `a` followed by the items of `b` it lacks.
pub(crate) fn merged<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = a.to_vec();
    out.extend(b.iter().filter(|item| !a.contains(item)).cloned());
    out
}

#[cfg(test)]
mod tests;
