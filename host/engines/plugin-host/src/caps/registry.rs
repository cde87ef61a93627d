//! The registry: every capability the host provides, one line each. The
//! order is the order of `[capabilities]` keys in listings, of refusals,
//! and of the variables capabilities set.
//!
//! To add a capability: write its module under `caps/` implementing
//! [`HostCapability`], and add its line here: `field: Type(Request =>
//! Grant),` with the doc comment of its manifest key (the field's name in
//! kebab-case, which must be the capability's `NAME`).

use super::agent::Agent;
use super::data_dir::DataDir;
use super::env::Env;
use super::filesystem::{Filesystem, FsRule, Preopen};
use super::http::{HostPattern, Http, HttpCredential};
use super::interaction::InteractionCap;
use super::llm::Llm;
use super::parallel::Parallel;
use super::process::{Process, ProcessCapability};
use super::{Admission, CapStore, GrantContext, HostCapability, LoadContext, Slot, StoreContext};
use crate::call::CallSetup;
use crate::limits::EffectiveLimits;
use kaizen_sandbox::Containment;
use std::path::PathBuf;
use wasmtime::component::Linker;

capabilities! {
    /// Directories, preopened at their own absolute paths.
    filesystem: Filesystem(Vec<FsRule> => Vec<Preopen>),
    /// Programs the plugin may run through the `process` import.
    process: Process(Option<ProcessCapability> => Option<ProcessCapability>),
    /// Hosts reachable through `wasi:http`: `host`, `*.domain`, `*`, each
    /// with an optional `scheme://` and `:port`.
    http: Http(Vec<String> => Vec<HostPattern>),
    /// Environment variables passed from the host (`*` in a grant: any).
    /// Names that look like credentials are never passed.
    env: Env(Vec<String> => Vec<String>),
    /// The `interaction` import: ask the user, report progress.
    interaction: InteractionCap(bool => bool),
    /// The `agent` import: run sub-agents.
    agent: Agent(bool => bool),
    /// The `llm` import: budgeted model completions.
    llm: Llm(bool => bool),
    /// The `parallel` import: run its own tools in several instances at
    /// once.
    parallel: Parallel(bool => bool),
    /// A directory of its own that outlives sessions, under `KAIZEN_HOME`
    /// (`data/<plugin>`), which no other plugin and no program can reach:
    /// where an audit log lives.
    data_dir: DataDir(bool => Option<PathBuf>),
}

/// One capability as load-time checks and linking see it ([`link_each`]
/// links it).
pub(crate) struct Entry {
    /// [`HostCapability::NAME`].
    pub name: &'static str,
    /// [`HostCapability::IMPORTS`].
    pub imports: &'static [&'static str],
    /// [`HostCapability::SINCE`].
    pub since: Option<&'static str>,
    /// [`HostCapability::ENV_VAR`].
    pub env_var: Option<&'static str>,
    /// Whether a grant includes it.
    pub granted: fn(&EffectiveGrant) -> bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_capability_is_named_by_its_manifest_key() {
        assert_eq!(REGISTRY.len(), FIELDS.len());
        for (entry, field) in REGISTRY.iter().zip(FIELDS) {
            assert_eq!(entry.name, field.replace('_', "-"));
        }
    }

    #[test]
    fn no_interface_needs_two_capabilities() {
        let mut seen = std::collections::HashSet::new();
        for entry in REGISTRY {
            for import in entry.imports {
                assert!(seen.insert(*import), "{import} is claimed twice");
            }
        }
    }
}
