//! The operator's grants, and the effective grant of a plugin: what it
//! requested, intersected with what it was granted (each capability's
//! intersection is its own, in [`crate::caps`]).

use crate::caps::filesystem::Access;
use crate::caps::http::HttpCredential;
use crate::caps::{Capabilities, EffectiveGrant, GrantContext};
use crate::limits::{DEFAULT_MAX_MEMORY_MIB, Limits};
use crate::origin::Origin;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the operator allows: per-plugin grants plus upper bounds on limits.
/// Built from `kaizen.toml`, the user config and CLI flags.
#[derive(Debug, Clone)]
pub struct GrantPolicy {
    /// The session's workspace; `$WORKSPACE` in rules resolves to it.
    pub workspace: PathBuf,
    /// Directories added with `--add-dir` or config, granted to every plugin.
    pub extra_dirs: Vec<(PathBuf, Access)>,
    /// Grants by plugin name; `*` applies to every plugin.
    pub grants: BTreeMap<String, Capabilities>,
    /// The most memory any plugin may have, in MiB.
    pub max_memory_mib: u64,
    /// The longest any call may run, in seconds.
    pub max_cpu_seconds: f64,
    /// Headers the host adds to plugins' requests for given hosts, with
    /// secrets from its environment (`[[http.credentials]]`).
    pub http_credentials: Vec<HttpCredential>,
    /// Where plugins granted `data-dir` get their directory
    /// (`$KAIZEN_HOME/data`); without it, `data-dir` is refused.
    pub data_root: Option<PathBuf>,
}

impl GrantPolicy {
    /// A policy with only the defaults every plugin gets: the workspace
    /// read-write and the `interaction` import.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            extra_dirs: Vec::new(),
            grants: BTreeMap::new(),
            max_memory_mib: DEFAULT_MAX_MEMORY_MIB,
            max_cpu_seconds: 300.0,
            http_credentials: Vec::new(),
            data_root: None,
        }
    }

    /// Everything granted to plugin `name` from `origin`: the defaults, the
    /// `*` grant and its own grant. The defaults are each capability's
    /// own: the workspace read-write, the directories added with
    /// `--add-dir` and, except for a workspace's own plugins (which must be
    /// granted it by name or `*`), the `interaction` import.
    pub fn granted_to(&self, name: &str, origin: Origin) -> Capabilities {
        let mut base = Capabilities::defaults(&self.context(name, origin));
        for key in ["*", name] {
            if let Some(grant) = self.grants.get(key) {
                base = base.union(grant);
            }
        }
        base
    }

    /// Intersects the request of plugin `name` from `origin` with its
    /// grant, capability by capability, and caps its limits.
    pub fn effective(
        &self,
        name: &str,
        origin: Origin,
        requested: &Capabilities,
        limits: &Limits,
    ) -> EffectiveGrant {
        let granted = self.granted_to(name, origin);
        let cx = self.context(name, origin);
        let mut out = EffectiveGrant::intersect(&cx, requested, &granted);
        out.limits = limits.capped(self.max_memory_mib, self.max_cpu_seconds, &mut out.denied);
        out
    }

    /// What the capabilities consult of the policy for plugin `plugin`
    /// from `origin`.
    fn context<'a>(&'a self, plugin: &'a str, origin: Origin) -> GrantContext<'a> {
        GrantContext {
            workspace: &self.workspace,
            extra_dirs: &self.extra_dirs,
            data_root: self.data_root.as_deref(),
            http_credentials: &self.http_credentials,
            plugin,
            origin,
        }
    }
}

#[cfg(test)]
mod tests;
