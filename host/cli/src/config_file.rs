//! One configuration file as written: `config.toml` or `kaizen.toml`,
//! its sections, and the checks made when it is read. `config.rs` merges
//! the files into what a run uses.

use crate::context_config::ContextSection;
use crate::mcp_servers::McpServerEntry;
use crate::memory_cmd::MemorySection;
use crate::model_config::{
    FallbacksSection, ModelsSection, PluginLlmSection, SubAgentModelsSection,
};
use crate::planner_setup::{PlannerSection, PlannersSection};
use anyhow::Context as _;
use kaizen_llm::Price;
use kaizen_plugins::{Access, Capabilities, HttpCredential, SignaturePolicy, TrustedKey};
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
    /// Permission rules and mode, in Claude Code's syntax.
    #[serde(default)]
    pub permissions: PermissionsSection,
    /// Hooks: timeouts, and how hook plugins and command hooks run.
    #[serde(default)]
    pub hooks: HooksSection,
    /// `kaizen mcp serve` (the user's config only).
    #[serde(default)]
    pub mcp: McpSection,
    /// MCP servers whose tools sessions use (the user's config only; a
    /// workspace names its own in `.mcp.json`).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
    /// Which model plays each role (`planner = "gpt-4o-mini"`).
    #[serde(default)]
    pub models: ModelsSection,
    /// Caps on plugins' completions (the user's config only).
    #[serde(default, rename = "plugin-llm")]
    pub plugin_llm: PluginLlmSection,
    /// Sub-agents' models by type.
    #[serde(default, rename = "sub-agent-models")]
    pub sub_agent_models: SubAgentModelsSection,
    /// Models to fall back on, by role.
    #[serde(default)]
    pub fallbacks: FallbacksSection,
    /// The planner runs use, and its bounds.
    #[serde(default)]
    pub planner: PlannerSection,
    /// Planners' settings, by planner name.
    #[serde(default)]
    pub planners: PlannersSection,
    /// When runs compact their conversation, and models' windows.
    #[serde(default)]
    pub context: ContextSection,
    /// The learning memory (the user's config only).
    #[serde(default)]
    pub memory: MemorySection,
}

/// The `[mcp]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct McpSection {
    /// The variable holding the token `kaizen mcp serve --http` requires
    /// of every request (`Authorization: Bearer <token>`).
    pub serve_token_env: Option<String>,
}

/// The `[permissions]` table: Claude Code's `permissions` settings in
/// TOML.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PermissionsSection {
    /// The mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`,
    /// `dontAsk`).
    pub default_mode: Option<String>,
    /// Rules that let calls run without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules that always ask.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Rules that refuse.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The `[hooks]` table (the user's config only).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HooksSection {
    /// Seconds a hook plugin may take on one event when it sets no
    /// timeout of its own (default 60).
    pub timeout_seconds: Option<f64>,
    /// Run Claude Code's command hooks from its settings files (default
    /// true).
    pub claude: Option<bool>,
    /// Let command hooks' programs use the network (default false).
    #[serde(default)]
    pub command_network: bool,
    /// Per hook plugin: `required`, `priority`, `timeout-seconds`.
    #[serde(default)]
    pub plugins: BTreeMap<String, HookPluginSettings>,
    /// The built-in hook plugins to run: `audit`, `redact` (none by
    /// default; hook plugins from other places run once loaded).
    #[serde(default)]
    pub builtins: Vec<String>,
}

/// How one hook plugin runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HookPluginSettings {
    /// When it fails or times out, its events fail closed.
    #[serde(default)]
    pub required: bool,
    /// CRITICAL, HIGH, NORMAL, LOW, or a number (higher first); over the
    /// plugin's own.
    pub priority: Option<String>,
    /// Seconds it may take on one event.
    pub timeout_seconds: Option<f64>,
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
    pub(crate) fn merge(&mut self, other: &SessionsSection) {
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
    /// config only (a project's entries are ignored): a project's file must
    /// not be able to send the user's secrets to a host of its choosing.
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
    /// The most memory one sandboxed process may allocate, in MiB.
    pub max_memory_mib: Option<u64>,
    /// The size of each sandboxed process's private `/tmp` (and of
    /// `/dev/shm`), in MiB.
    pub tmp_size_mib: Option<u64>,
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
    /// Refuse plugins (other than the built-ins) whose component is not
    /// signed by a trusted key (the user's config only).
    #[serde(default)]
    pub require_signature: bool,
    /// Minisign public keys whose signatures count (the user's config
    /// only).
    #[serde(default)]
    pub trusted_keys: Vec<String>,
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

impl ConfigFile {
    /// Reads `path`; a missing file is an empty config.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
        };
        Self::parse(&text, path)
    }

    /// Parses `text`, the content of `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        let config: ConfigFile = toml::from_str(text).map_err(|err| {
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
            if credential.plugins.is_empty() {
                tracing::warn!(
                    "{}: the [[http.credentials]] entry for {} names no plugins, so no plugin \
                     gets it; add plugins = [\"NAME\", ...]",
                    path.display(),
                    credential.host
                );
            }
        }
        Ok(config)
    }
}
