//! The operator's grants and the effective grant of a plugin: what it
//! requested, intersected with what it was granted.

use crate::capability::{
    Access, Capabilities, FsRule, Limits, ProcessCapability, is_secret_env_name,
};
use crate::discovery::Origin;
use crate::http_credential::HttpCredential;
use crate::http_rule::HostPattern;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Memory a plugin gets when its manifest names no limit.
pub const DEFAULT_MEMORY_MIB: u64 = 256;
/// Time one call may run when the manifest names no limit.
pub const DEFAULT_CPU_SECONDS: f64 = 30.0;
/// The most memory the operator allows any plugin unless configured.
pub const DEFAULT_MAX_MEMORY_MIB: u64 = 1024;

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
    /// `*` grant and its own grant. The defaults are the workspace
    /// read-write and, except for a workspace's own plugins (which must be
    /// granted it by name or `*`), the `interaction` import.
    pub fn granted_to(&self, name: &str, origin: Origin) -> Capabilities {
        let mut base = Capabilities {
            filesystem: vec![FsRule {
                path: "$WORKSPACE".into(),
                access: Access::ReadWrite,
            }],
            interaction: origin != Origin::Workspace,
            ..Capabilities::default()
        };
        for (dir, access) in &self.extra_dirs {
            base.filesystem.push(FsRule {
                path: dir.to_string_lossy().into_owned(),
                access: *access,
            });
        }
        for key in ["*", name] {
            if let Some(grant) = self.grants.get(key) {
                base = base.union(grant);
            }
        }
        base
    }

    /// Intersects the request of plugin `name` from `origin` with its
    /// grant.
    pub fn effective(
        &self,
        name: &str,
        origin: Origin,
        requested: &Capabilities,
        limits: &Limits,
    ) -> EffectiveGrant {
        let granted = self.granted_to(name, origin);
        let mut out = EffectiveGrant::default();
        self.intersect_filesystem(requested, &granted, &mut out);
        intersect_process(requested, &granted, &mut out);
        intersect_http(requested, &granted, &mut out);
        out.http_credentials = self
            .http_credentials
            .iter()
            .filter(|cred| cred.applies(name, &out.http))
            .cloned()
            .collect();
        intersect_env(requested, &granted, &mut out);
        for (flag, req, grant, what) in [
            (
                &mut out.interaction,
                requested.interaction,
                granted.interaction,
                "interaction",
            ),
            (&mut out.agent, requested.agent, granted.agent, "agent"),
            (&mut out.llm, requested.llm, granted.llm, "llm"),
            (
                &mut out.parallel,
                requested.parallel,
                granted.parallel,
                "parallel",
            ),
        ] {
            *flag = req && grant;
            if req && !grant {
                out.denied.push(format!("{what}: not granted"));
            }
        }
        if requested.data_dir {
            match (&self.data_root, granted.data_dir) {
                (Some(root), true) => out.data_dir = Some(root.join(name)),
                (None, true) => out
                    .denied
                    .push("data-dir: this host keeps no plugin data".into()),
                (_, false) => out.denied.push("data-dir: not granted".into()),
            }
        }
        out.limits = self.limits(limits, &mut out.denied);
        out
    }

    fn resolve(&self, path: &str) -> PathBuf {
        match path.strip_prefix("$WORKSPACE") {
            Some("") => self.workspace.clone(),
            Some(rest) => self.workspace.join(rest.trim_start_matches('/')),
            None => PathBuf::from(path),
        }
    }

    /// Directory trees intersect: a request inside a grant gets the
    /// request; a grant inside a request gets the grant (so a request for
    /// `/` read-only yields every granted directory, read-only). Access is
    /// the lower of the two.
    fn intersect_filesystem(
        &self,
        requested: &Capabilities,
        granted: &Capabilities,
        out: &mut EffectiveGrant,
    ) {
        let grants: Vec<(PathBuf, Access)> = granted
            .filesystem
            .iter()
            .map(|g| (self.resolve(&g.path), g.access))
            .collect();
        for rule in &requested.filesystem {
            let want = self.resolve(&rule.path);
            let mut found = false;
            let mut reduced = false;
            let mut add = |path: PathBuf, access: Access, out: &mut EffectiveGrant| {
                found = true;
                reduced |= access < rule.access;
                match out.filesystem.iter_mut().find(|p| p.path == path) {
                    Some(existing) => existing.access = existing.access.max(access),
                    None => out.filesystem.push(Preopen { path, access }),
                }
            };
            // The best grant covering the whole request, if any.
            let covering = grants
                .iter()
                .filter(|(dir, _)| want.starts_with(dir))
                .map(|(_, access)| (*access).min(rule.access))
                .max();
            if let Some(access) = covering {
                add(want.clone(), access, out);
            } else {
                for (dir, access) in grants.iter().filter(|(dir, _)| dir.starts_with(&want)) {
                    add(dir.clone(), (*access).min(rule.access), out);
                }
            }
            if !found {
                out.denied.push(format!(
                    "filesystem: {} ({}) is outside every granted directory",
                    want.display(),
                    rule.access
                ));
            } else if reduced {
                out.denied
                    .push(format!("filesystem: write access to {}", want.display()));
            }
        }
    }

    fn limits(&self, requested: &Limits, denied: &mut Vec<String>) -> EffectiveLimits {
        let want_mib = requested.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
        let memory_mib = want_mib.min(self.max_memory_mib);
        if memory_mib < want_mib {
            denied.push(format!(
                "limits: memory-mib {want_mib} lowered to the operator's maximum {memory_mib}"
            ));
        }
        let want_secs = requested.cpu_seconds.unwrap_or(DEFAULT_CPU_SECONDS);
        let cpu_seconds = want_secs.min(self.max_cpu_seconds);
        if cpu_seconds < want_secs {
            denied.push(format!(
                "limits: cpu-seconds {want_secs} lowered to the operator's maximum {cpu_seconds}"
            ));
        }
        EffectiveLimits {
            memory_bytes: memory_mib << 20,
            cpu_time: Duration::from_secs_f64(cpu_seconds),
        }
    }
}

fn intersect_process(requested: &Capabilities, granted: &Capabilities, out: &mut EffectiveGrant) {
    let Some(want) = &requested.process else {
        return;
    };
    let Some(grant) = &granted.process else {
        out.denied.push("process: not granted".into());
        return;
    };
    let any = grant.programs.iter().any(|p| p == "*");
    let (programs, refused): (Vec<String>, Vec<String>) = want
        .programs
        .iter()
        .cloned()
        .partition(|program| any || grant.programs.contains(program));
    for program in refused {
        out.denied.push(format!("process: program `{program}`"));
    }
    if want.network && !grant.network {
        out.denied.push("process: network access".into());
    }
    if !programs.is_empty() {
        out.process = Some(ProcessCapability {
            programs,
            network: want.network && grant.network,
        });
    }
}

fn intersect_http(requested: &Capabilities, granted: &Capabilities, out: &mut EffectiveGrant) {
    // Both sides were checked when their files were parsed.
    let grants: Vec<HostPattern> = granted
        .http
        .iter()
        .filter_map(|p| HostPattern::parse(p).ok())
        .collect();
    for text in &requested.http {
        let Ok(want) = HostPattern::parse(text) else {
            continue;
        };
        if grants.iter().any(|grant| grant.covers(&want)) {
            // Exact hosts granted inside a wildcard request are kept too:
            // only an entry naming a host opens its internal addresses.
            let exact = grants
                .iter()
                .filter(|g| g.names_host_exactly() && want.covers(g) && **g != want);
            for pattern in std::iter::once(&want).chain(exact) {
                if !out.http.contains(pattern) {
                    out.http.push(pattern.clone());
                }
            }
            continue;
        }
        // Like directories: a grant inside the request gets the grant, so
        // a plugin requesting `*` reaches exactly the hosts granted to it.
        let inside: Vec<&HostPattern> = grants.iter().filter(|g| want.covers(g)).collect();
        if inside.is_empty() {
            out.denied.push(format!("http: {want}"));
        }
        for grant in inside {
            if !out.http.contains(grant) {
                out.http.push(grant.clone());
            }
        }
    }
}

fn intersect_env(requested: &Capabilities, granted: &Capabilities, out: &mut EffectiveGrant) {
    let any = granted.env.iter().any(|name| name == "*");
    for name in &requested.env {
        if is_secret_env_name(name) {
            out.denied.push(format!(
                "env: {name} looks like a credential and is never passed to plugins"
            ));
        } else if any || granted.env.contains(name) {
            out.env.push(name.clone());
        } else {
            out.denied.push(format!("env: {name}"));
        }
    }
}

/// A directory preopened for a plugin, at its own absolute path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preopen {
    /// The host path, which is also the guest path.
    pub path: PathBuf,
    /// Read-only or read-write.
    pub access: Access,
}

/// Limits in force for a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EffectiveLimits {
    /// Linear memory bound.
    pub memory_bytes: u64,
    /// How long one call may run.
    pub cpu_time: Duration,
}

impl Default for EffectiveLimits {
    fn default() -> Self {
        Self {
            memory_bytes: DEFAULT_MEMORY_MIB << 20,
            cpu_time: Duration::from_secs_f64(DEFAULT_CPU_SECONDS),
        }
    }
}

/// What a plugin may actually use, and what it asked for but did not get.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EffectiveGrant {
    /// Directories preopened.
    pub filesystem: Vec<Preopen>,
    /// Programs it may run.
    pub process: Option<ProcessCapability>,
    /// Hosts it may reach over HTTP.
    #[serde(serialize_with = "serialize_display_list")]
    pub http: Vec<HostPattern>,
    /// Headers the host adds to its requests for given hosts (names of
    /// the header and variable only; the secrets are read at load).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub http_credentials: Vec<HttpCredential>,
    /// Environment variable names passed in.
    pub env: Vec<String>,
    /// The `interaction` import.
    pub interaction: bool,
    /// The `agent` import.
    pub agent: bool,
    /// The `llm` import.
    pub llm: bool,
    /// The `parallel` import.
    pub parallel: bool,
    /// Its own directory under `KAIZEN_HOME`, read-write, reachable by no
    /// other plugin and no program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Limits in force.
    pub limits: EffectiveLimits,
    /// Requests that were refused or reduced, one line each.
    pub denied: Vec<String>,
}

fn serialize_display_list<S: serde::Serializer>(
    items: &[HostPattern],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(items.iter().map(|item| item.to_string()))
}

#[cfg(test)]
mod tests;
