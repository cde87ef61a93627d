//! One configuration file as written: `config.toml` or `kaizen.toml`,
//! its sections, and the checks made when it is read. `config.rs` merges
//! the files into what a run uses.

use crate::context_config::ContextSection;
use crate::mcp_config::McpServerEntry;
use crate::memory_setup::MemorySection;
use crate::model_config::{
    FallbacksSection, ModelsSection, PluginLlmSection, SubAgentModelsSection,
};
use crate::planner_setup::{PlannerSection, PlannersSection};
use crate::section::{Admission, Scope, Section, effective};
use anyhow::Context as _;
use kaizen_llm::Price;
use kaizen_plugin_host::{Capabilities, HttpCredential};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;

mod granting;

pub use granting::{PluginsSection, SandboxSection};

pub use crate::section::{PROJECT_CONFIG, USER_CONFIG};

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

impl Section for McpSection {
    const KEY: &'static str = "[mcp]";
    const SCOPE: Scope = Scope::User("set in the user's config only");

    fn is_set(&self) -> bool {
        self.serve_token_env.is_some()
    }

    fn merge(&mut self, over: Self) {
        *self = over;
    }
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

impl Section for HooksSection {
    const KEY: &'static str = "[hooks]";
    const SCOPE: Scope = Scope::User("how hooks run is set in the user's config only");

    fn is_set(&self) -> bool {
        !self.plugins.is_empty()
            || self.timeout_seconds.is_some()
            || self.claude.is_some()
            || self.command_network
            || !self.builtins.is_empty()
    }

    fn merge(&mut self, over: Self) {
        *self = over;
    }
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
}

/// A workspace's `[sessions]` applies, trusted or not: how often its own
/// sessions are checkpointed concerns it alone.
impl Section for SessionsSection {
    const KEY: &'static str = "[sessions]";
    const SCOPE: Scope = Scope::Any;

    fn is_set(&self) -> bool {
        self.checkpoint_every_cycles.is_some()
            || self.checkpoint_every_seconds.is_some()
            || self.keep_checkpoints.is_some()
            || self.compress_above_kib.is_some()
    }

    fn merge(&mut self, over: Self) {
        self.checkpoint_every_cycles = over
            .checkpoint_every_cycles
            .or(self.checkpoint_every_cycles);
        self.checkpoint_every_seconds = over
            .checkpoint_every_seconds
            .or(self.checkpoint_every_seconds);
        self.keep_checkpoints = over.keep_checkpoints.or(self.keep_checkpoints);
        self.compress_above_kib = over.compress_above_kib.or(self.compress_above_kib);
    }
}

/// The `[http]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSection {
    /// `[[http.credentials]]`: a header with a secret from the host's
    /// environment, added to requests for one host. Read from the user's
    /// config only (a project's entries are ignored): a project's file must
    /// not be able to send the user's secrets to a host of its choosing.
    #[serde(default)]
    pub credentials: Vec<HttpCredential>,
}

impl Section for HttpSection {
    const KEY: &'static str = "[[http.credentials]]";
    const SCOPE: Scope = Scope::User("credentials are set in the user's config only");

    fn is_set(&self) -> bool {
        !self.credentials.is_empty()
    }

    fn merge(&mut self, over: Self) {
        *self = over;
    }
}

/// Merges each section of two files by its [`Section`] rules.
macro_rules! effective_sections {
    ($user:ident, $project:ident, $args:tt, [$($section:ident),* $(,)?], $($rest:tt)*) => {
        ConfigFile {
            $($section: effective_sections!(@one $user.$section, $project.$section, $args),)*
            $($rest)*
        }
    };
    (@one $user:expr, $project:expr, ($user_file:expr, $user_base:expr, $project_file:expr, $admission:expr)) => {
        effective($user, $user_file, $user_base, $project, $project_file, $admission)?
    };
}

impl ConfigFile {
    /// The configuration in effect: the user's file (`user`, read from
    /// `user_file` in `user_base`) with what the workspace's (`project`,
    /// from `project_file`) may set over it, section by section; what it
    /// may not is noted in `admission`. Permission rules are not merged:
    /// each source's stay its own (the guard weighs them), so the result
    /// holds the user's, and the workspace's are returned beside it.
    pub fn effective(
        user: ConfigFile,
        user_file: &Path,
        user_base: &Path,
        project: ConfigFile,
        project_file: &Path,
        admission: &mut Admission<'_>,
    ) -> anyhow::Result<(ConfigFile, PermissionsSection)> {
        let merged = effective_sections!(
            user,
            project,
            (user_file, user_base, project_file, admission),
            [
                plugins,
                grants,
                pricing,
                sandbox,
                http,
                sessions,
                hooks,
                mcp,
                mcp_servers,
                models,
                plugin_llm,
                sub_agent_models,
                fallbacks,
                planner,
                planners,
                context,
                memory,
            ],
            permissions: user.permissions,
        );
        Ok((merged, project.permissions))
    }

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

impl Section for BTreeMap<String, Price> {
    const KEY: &'static str = "[pricing]";
    const SCOPE: Scope = Scope::User("prices are set in the user's config only");

    fn is_set(&self) -> bool {
        !self.is_empty()
    }

    fn merge(&mut self, over: Self) {
        self.extend(over);
    }
}

#[cfg(test)]
mod tests;
