//! The operator's configuration: the user's `$KAIZEN_HOME/config.toml`,
//! then the project's `kaizen.toml`, then CLI flags, merged into one
//! [`GrantPolicy`] and the list of plugin directories.

use crate::builtins;
use anyhow::Context as _;
use kaizen_llm::{Price, PriceTable};
use kaizen_plugins::{Access, Capabilities, GrantPolicy, HttpCredential, Origin, SandboxSettings};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The project's configuration file, at the workspace root.
pub const PROJECT_CONFIG: &str = "kaizen.toml";
/// The user's configuration file, under `KAIZEN_HOME`.
pub const USER_CONFIG: &str = "config.toml";

/// One configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Plugin loading and limits.
    #[serde(default)]
    pub plugins: PluginsSection,
    /// Capabilities granted by plugin name (`*` for all).
    #[serde(default)]
    pub grants: BTreeMap<String, Capabilities>,
    /// Model prices (USD per million tokens) by model-name prefix, over
    /// the built-in table.
    #[serde(default)]
    pub pricing: BTreeMap<String, Price>,
    /// The OS sandbox programs run in.
    #[serde(default)]
    pub sandbox: SandboxSection,
    /// Outbound HTTP: credentials the host adds to plugins' requests.
    #[serde(default)]
    pub http: HttpSection,
    /// How sessions are kept.
    #[serde(default)]
    pub sessions: SessionsSection,
}

/// The `[sessions]` table: when a session is checkpointed and how many
/// checkpoints are kept.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SessionsSection {
    /// Checkpoint after this many cycles (default 10).
    pub checkpoint_every_cycles: Option<u32>,
    /// Checkpoint after this many seconds (default 60).
    pub checkpoint_every_seconds: Option<f64>,
    /// Checkpoints kept per session (default 5).
    pub keep_checkpoints: Option<usize>,
    /// Compress checkpoints larger than this many KiB (default 64).
    pub compress_above_kib: Option<usize>,
}

impl SessionsSection {
    /// Checkpoints kept per session.
    pub fn keep(&self) -> usize {
        self.keep_checkpoints.unwrap_or(5).max(1)
    }

    /// The size above which checkpoints are compressed.
    pub fn compress_above_bytes(&self) -> usize {
        self.compress_above_kib.unwrap_or(64) << 10
    }

    /// `other`'s settings over these.
    fn merge(&mut self, other: &SessionsSection) {
        self.checkpoint_every_cycles = other
            .checkpoint_every_cycles
            .or(self.checkpoint_every_cycles);
        self.checkpoint_every_seconds = other
            .checkpoint_every_seconds
            .or(self.checkpoint_every_seconds);
        self.keep_checkpoints = other.keep_checkpoints.or(self.keep_checkpoints);
        self.compress_above_kib = other.compress_above_kib.or(self.compress_above_kib);
    }
}

/// The `[http]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSection {
    /// `[[http.credentials]]`: a header with a secret from the host's
    /// environment, added to requests for one host. Read from the user's
    /// config only: a project's file must not be able to send the user's
    /// secrets to a host of its choosing.
    #[serde(default)]
    pub credentials: Vec<HttpCredential>,
}

/// The `[sandbox]` table.
#[derive(Debug, Default, Deserialize)]
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
}

/// The `[plugins]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PluginsSection {
    /// More directories to load plugins from.
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
    /// Directories granted to every plugin besides the workspace.
    #[serde(default)]
    pub add_dirs: Vec<AddDir>,
    /// The most memory any plugin may have.
    pub max_memory_mib: Option<u64>,
    /// The longest any call may run.
    pub max_cpu_seconds: Option<f64>,
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

impl ConfigFile {
    /// Reads `path`; a missing file is an empty config.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
        };
        let config: ConfigFile = toml::from_str(&text).map_err(|err| {
            anyhow::anyhow!("{} is not a valid Kaizen config: {err}", path.display())
        })?;
        for (name, grant) in &config.grants {
            grant
                .check()
                .map_err(|err| anyhow::anyhow!("{}: [grants.{name}]: {err}", path.display()))?;
        }
        for credential in &config.http.credentials {
            credential.check().map_err(|err| {
                anyhow::anyhow!("{}: [[http.credentials]]: {err}", path.display())
            })?;
        }
        Ok(config)
    }
}

/// Everything the plugin commands need from config and flags.
pub struct Setup {
    /// Where state lives.
    pub kaizen_home: PathBuf,
    /// The merged grants and limits.
    pub policy: GrantPolicy,
    /// Plugin directories in load order, after the built-ins.
    pub plugin_roots: Vec<(PathBuf, Origin)>,
    /// Model prices: the built-in table with the config files' overrides.
    pub prices: PriceTable,
    /// The OS sandbox's settings.
    pub sandbox: SandboxSettings,
    /// How sessions are kept (the project's file over the user's).
    pub sessions: SessionsSection,
}

/// `KAIZEN_HOME`, else the user's data directory.
pub fn kaizen_home() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("KAIZEN_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    dirs::data_dir()
        .map(|dir| dir.join("kaizen"))
        .context("cannot find a data directory for Kaizen's state; set KAIZEN_HOME")
}

impl Setup {
    /// Merges user config, project config and flags.
    pub fn new(
        cwd: Option<&Path>,
        plugin_flags: &[PathBuf],
        add_dirs: &[PathBuf],
    ) -> anyhow::Result<Self> {
        let here = std::env::current_dir().context("reading the current directory")?;
        let workspace = absolute(&here, cwd.unwrap_or(&here));
        let workspace = workspace
            .canonicalize()
            .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
        let kaizen_home = kaizen_home()?;
        let user = ConfigFile::load(&kaizen_home.join(USER_CONFIG))?;
        let project = ConfigFile::load(&workspace.join(PROJECT_CONFIG))?;
        if !project.http.credentials.is_empty() {
            anyhow::bail!(
                "{}: [[http.credentials]] is read only from {}: a project's file must not be able to send your secrets to hosts it chooses. Move the entries there.",
                workspace.join(PROJECT_CONFIG).display(),
                kaizen_home.join(USER_CONFIG).display()
            );
        }

        let mut policy = GrantPolicy::new(&workspace);
        let mut prices = PriceTable::default();
        let mut sandbox = SandboxSettings {
            allow_degraded: user.sandbox.allow_degraded,
            ..SandboxSettings::default()
        };
        let mut sessions = SessionsSection::default();
        let mut plugin_roots = vec![
            (kaizen_home.join("plugins"), Origin::User),
            (workspace.join(".kaizen").join("plugins"), Origin::Workspace),
        ];
        for (config, base) in [(&user, &kaizen_home), (&project, &workspace)] {
            for (model, price) in &config.pricing {
                prices = prices.with_override(model.clone(), *price);
            }
            for (name, grant) in &config.grants {
                let merged = policy
                    .grants
                    .get(name)
                    .map_or_else(|| grant.clone(), |existing| existing.union(grant));
                policy.grants.insert(name.clone(), merged);
            }
            for dir in &config.plugins.add_dirs {
                policy
                    .extra_dirs
                    .push((absolute(base, &dir.path), dir.access));
            }
            plugin_roots.extend(
                config
                    .plugins
                    .dirs
                    .iter()
                    .map(|dir| (absolute(base, dir), Origin::Flag)),
            );
            // The strictest maximum wins, so a project cannot raise a
            // bound the user set.
            if let Some(max) = config.plugins.max_memory_mib {
                policy.max_memory_mib = policy.max_memory_mib.min(max);
            }
            if let Some(max) = config.plugins.max_cpu_seconds {
                policy.max_cpu_seconds = policy.max_cpu_seconds.min(max);
            }
            merge_sandbox(&mut sandbox, &config.sandbox, base);
            sessions.merge(&config.sessions);
        }
        // A built-in's default grant holds until a config file grants
        // that plugin something itself.
        for (name, grant) in builtins::default_grants() {
            policy.grants.entry(name.to_string()).or_insert(grant);
        }
        policy.http_credentials = user.http.credentials.clone();
        for default in builtins::default_credentials() {
            let host = default.host.to_ascii_lowercase();
            if !policy
                .http_credentials
                .iter()
                .any(|c| c.host.to_ascii_lowercase() == host)
            {
                policy.http_credentials.push(default);
            }
        }
        for dir in add_dirs {
            policy
                .extra_dirs
                .push((absolute(&here, dir), Access::ReadWrite));
        }
        plugin_roots.extend(
            plugin_flags
                .iter()
                .map(|dir| (absolute(&here, dir), Origin::Flag)),
        );
        Ok(Self {
            kaizen_home,
            policy,
            plugin_roots,
            prices,
            sandbox,
            sessions,
        })
    }
}

/// Adds one file's `[sandbox]` table: read directories add up, and the
/// strictest limit wins.
fn merge_sandbox(settings: &mut SandboxSettings, section: &SandboxSection, base: &Path) {
    settings.readable.extend(
        section
            .read
            .iter()
            .map(|dir| absolute(base, &expand_home(dir))),
    );
    let limits = &mut settings.limits;
    if let Some(max) = section.max_processes {
        limits.max_processes = limits.max_processes.min(max);
    }
    if let Some(max) = section.max_file_size_mib {
        limits.max_file_size = limits.max_file_size.min(max << 20);
    }
    if let Some(max) = section.max_cpu_seconds {
        limits.cpu_seconds = limits.cpu_seconds.min(max);
    }
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// `~/rest` as the user's home joined with `rest`; other paths unchanged.
fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}
