//! The sections that say what plugins and programs may reach:
//! `[plugins]`, `[grants]` and `[sandbox]`. Any workspace may lower their
//! limits; a trusted one may add grants and directories inside it; only
//! the user's config may reach outside the workspace, say which
//! signatures count, or weaken the sandbox.

use crate::section::{Admission, Scope, Section, absolute, expand_home};
use kaizen_plugin_host::{Access, Capabilities, SignaturePolicy, TrustedKey};
use kaizen_sandbox::Containment;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SandboxSection {
    /// More directories sandboxed programs may read (a toolchain under
    /// `$HOME`, say), besides the system directories and the grant.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Run programs even when the kernel lacks a sandbox feature. Only the
    /// user's own config may say so: a project cannot weaken the sandbox.
    #[serde(default)]
    pub allow_degraded: bool,
    /// The most processes a sandboxed command may have at once.
    pub max_processes: Option<u64>,
    /// The largest file a sandboxed program may write, in MiB.
    pub max_file_size_mib: Option<u64>,
    /// The most CPU time one sandboxed process may use, in seconds.
    pub max_cpu_seconds: Option<u64>,
    /// The most memory one sandboxed process may allocate, in MiB.
    pub max_memory_mib: Option<u64>,
    /// The size of each sandboxed process's private `/tmp` (and of
    /// `/dev/shm`), in MiB.
    pub tmp_size_mib: Option<u64>,
}

impl SandboxSection {
    /// Lowers `containment`'s limits to this section's: the strictest
    /// wins.
    pub fn lower_limits(&self, containment: &mut Containment) {
        let limits = &mut containment.limits;
        if let Some(max) = self.max_processes {
            limits.max_processes = limits.max_processes.min(max);
        }
        if let Some(max) = self.max_file_size_mib {
            limits.max_file_size = limits.max_file_size.min(max << 20);
        }
        if let Some(max) = self.max_cpu_seconds {
            limits.cpu_seconds = limits.cpu_seconds.min(max);
        }
        if let Some(max) = self.max_memory_mib {
            limits.max_memory = limits.max_memory.min(max << 20);
        }
        if let Some(max) = self.tmp_size_mib {
            limits.tmp_size = limits.tmp_size.min(max << 20);
        }
    }
}

/// Any workspace may lower the limits; a trusted one may add directories
/// inside it to read; only the user may allow a degraded sandbox.
impl Section for SandboxSection {
    const KEY: &'static str = "[sandbox]";
    const SCOPE: Scope = Scope::Fields;

    fn is_set(&self) -> bool {
        !self.read.is_empty()
            || self.allow_degraded
            || self.max_processes.is_some()
            || self.max_file_size_mib.is_some()
            || self.max_cpu_seconds.is_some()
            || self.max_memory_mib.is_some()
            || self.tmp_size_mib.is_some()
    }

    fn merge(&mut self, over: Self) {
        self.read.extend(over.read);
        self.allow_degraded |= over.allow_degraded;
        self.max_processes = lowest(self.max_processes, over.max_processes);
        self.max_file_size_mib = lowest(self.max_file_size_mib, over.max_file_size_mib);
        self.max_cpu_seconds = lowest(self.max_cpu_seconds, over.max_cpu_seconds);
        self.max_memory_mib = lowest(self.max_memory_mib, over.max_memory_mib);
        self.tmp_size_mib = lowest(self.tmp_size_mib, over.tmp_size_mib);
    }

    fn resolve(&mut self, base: &Path) {
        for dir in &mut self.read {
            *dir = absolute(base, &expand_home(dir));
        }
    }

    fn admit(mut self, admission: &mut Admission<'_>) -> Self {
        if std::mem::take(&mut self.allow_degraded) {
            admission.ignore(
                "[sandbox] allow-degraded",
                "only the user's config may weaken the sandbox",
            );
        }
        self.read = admit_dirs(admission, "[sandbox] read", std::mem::take(&mut self.read));
        self
    }
}

/// The `[plugins]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PluginsSection {
    /// More directories to load plugins from.
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
    /// The directories of `dirs` that a trusted workspace's file named
    /// (their plugins' origin is the workspace).
    #[serde(skip)]
    pub workspace_dirs: Vec<PathBuf>,
    /// Directories granted to every plugin besides the workspace.
    #[serde(default)]
    pub add_dirs: Vec<AddDir>,
    /// The most memory any plugin may have.
    pub max_memory_mib: Option<u64>,
    /// The longest any call may run.
    pub max_cpu_seconds: Option<f64>,
    /// Refuse plugins (other than the built-ins) whose component is not
    /// signed by a trusted key (the user's config only).
    #[serde(default)]
    pub require_signature: bool,
    /// Minisign public keys whose signatures count (the user's config
    /// only).
    #[serde(default)]
    pub trusted_keys: Vec<String>,
}

/// Any workspace may lower the limits; a trusted one may add directories
/// inside it (to grant, or to load plugins from); only the user says
/// which signatures count.
impl Section for PluginsSection {
    const KEY: &'static str = "[plugins]";
    const SCOPE: Scope = Scope::Fields;

    fn is_set(&self) -> bool {
        !self.dirs.is_empty()
            || !self.add_dirs.is_empty()
            || self.max_memory_mib.is_some()
            || self.max_cpu_seconds.is_some()
            || self.require_signature
            || !self.trusted_keys.is_empty()
    }

    fn merge(&mut self, over: Self) {
        self.dirs.extend(over.dirs);
        self.workspace_dirs.extend(over.workspace_dirs);
        self.add_dirs.extend(over.add_dirs);
        self.max_memory_mib = lowest(self.max_memory_mib, over.max_memory_mib);
        self.max_cpu_seconds = match (self.max_cpu_seconds, over.max_cpu_seconds) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.require_signature |= over.require_signature;
        self.trusted_keys.extend(over.trusted_keys);
    }

    fn check(&self, file: &Path) -> anyhow::Result<()> {
        self.signatures(file).map(drop)
    }

    fn resolve(&mut self, base: &Path) {
        for dir in &mut self.dirs {
            *dir = absolute(base, dir);
        }
        for dir in &mut self.add_dirs {
            dir.path = absolute(base, &dir.path);
        }
    }

    fn admit(mut self, admission: &mut Admission<'_>) -> Self {
        if std::mem::take(&mut self.require_signature)
            | !std::mem::take(&mut self.trusted_keys).is_empty()
        {
            admission.ignore(
                "[plugins] require-signature and trusted-keys",
                "which keys to trust is set in the user's config only",
            );
        }
        let add_dirs = std::mem::take(&mut self.add_dirs);
        let what = "[plugins] add-dirs";
        if !add_dirs.is_empty() && !admission.trusted {
            admission.untrusted(what);
        } else {
            self.add_dirs = add_dirs
                .into_iter()
                .filter_map(|dir| {
                    Some(AddDir {
                        path: admission.inside(what, &dir.path)?,
                        access: dir.access,
                    })
                })
                .collect();
        }
        let dirs = std::mem::take(&mut self.dirs);
        self.workspace_dirs = admit_dirs(admission, "[plugins] dirs", dirs);
        self
    }
}

impl PluginsSection {
    /// The signature policy this section sets; `file` names it in errors.
    pub(crate) fn signatures(&self, file: &Path) -> anyhow::Result<SignaturePolicy> {
        let trusted = self
            .trusted_keys
            .iter()
            .map(|key| TrustedKey::parse(key))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| anyhow::anyhow!("{}: [plugins] trusted-keys: {err}", file.display()))?;
        if self.require_signature && trusted.is_empty() {
            anyhow::bail!(
                "{}: [plugins] require-signature is set but trusted-keys is empty, so no plugin could load; add the public key (minisign's base64 line) of whoever signs your plugins",
                file.display()
            );
        }
        Ok(SignaturePolicy {
            required: self.require_signature,
            trusted,
        })
    }
}

/// A directory granted to every plugin.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddDir {
    /// Absolute path.
    pub path: PathBuf,
    /// Access; read-write when omitted.
    #[serde(default = "read_write")]
    pub access: Access,
}

fn read_write() -> Access {
    Access::ReadWrite
}

/// Directories a workspace's file names for `what`: none, noted, unless
/// the workspace is trusted; then those inside it, made absolute.
fn admit_dirs(admission: &mut Admission<'_>, what: &str, dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    if dirs.is_empty() {
        return dirs;
    }
    if !admission.trusted {
        admission.untrusted(what);
        return Vec::new();
    }
    dirs.iter()
        .filter_map(|dir| admission.inside(what, dir))
        .collect()
}

/// The lower of two optional bounds.
fn lowest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `[grants.NAME]`: a trusted workspace's grants add to the user's.
impl Section for BTreeMap<String, Capabilities> {
    const KEY: &'static str = "[grants]";
    const SCOPE: Scope = Scope::Fields;

    fn is_set(&self) -> bool {
        !self.is_empty()
    }

    fn merge(&mut self, over: Self) {
        for (name, grant) in over {
            let merged = match self.get(&name) {
                Some(existing) => existing.union(&grant),
                None => grant,
            };
            self.insert(name, merged);
        }
    }

    fn admit(self, admission: &mut Admission<'_>) -> Self {
        if admission.trusted {
            return self;
        }
        for name in self.keys() {
            admission.untrusted(&format!("[grants.{name}]"));
        }
        Self::new()
    }
}
