//! The operator's configuration: the user's `$KAIZEN_HOME/config.toml`,
//! then the project's `kaizen.toml` (as far as the workspace is trusted:
//! see `trust.rs`), then CLI flags, merged into one [`GrantPolicy`] and the
//! list of plugin directories.

use crate::builtins;
use crate::context_config::ContextSection;
use crate::mcp_config::McpServerEntry;
use crate::memory_setup::MemorySection;
use crate::model_config::{FallbacksSection, model_roles};
use crate::planner_setup::{PlannerSection, PlannersSection};
use crate::section::{Admission, absolute};
use crate::trust::{AskTrust, ConfigSnapshot, TrustStatus, TrustStore};
use anyhow::Context as _;
use kaizen_llm::PriceTable;
use kaizen_loop::{ModelRoles, PluginLlmPolicy};
use kaizen_plugin_host::{Access, GrantPolicy, Origin, SignaturePolicy};
use kaizen_sandbox::Containment;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::home::kaizen_home;

pub use crate::config_file::{
    ConfigFile, HooksSection, McpSection, PROJECT_CONFIG, PermissionsSection, SessionsSection,
    USER_CONFIG,
};

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
    /// The workspace's configuration as read once: trust was decided on
    /// it, and the loaders read it instead of the disk.
    pub snapshot: Arc<ConfigSnapshot>,
    /// Where the workspace's plugin directories were copied from the
    /// snapshot, for loading; removed when the last handle goes.
    pub workspace_copies: Option<Arc<tempfile::TempDir>>,
    /// The OS sandbox's settings from config (read directories, limits,
    /// degraded mode); `plugin_host::plugin_host` completes them
    /// into the session's containment.
    pub sandbox: Containment,
    /// How sessions are kept (the project's file over the user's).
    pub sessions: SessionsSection,
    /// The workspace (canonical).
    pub workspace: PathBuf,
    /// Whether the workspace's own config took effect.
    pub trust: TrustStatus,
    /// What of the workspace's config did not take effect, and why.
    pub ignored: Vec<String>,
    /// `[permissions]` of the user's config.
    pub user_permissions: PermissionsSection,
    /// `[permissions]` of the workspace's `kaizen.toml` (its rules count
    /// as far as trust allows: see `guard_setup`).
    pub project_permissions: PermissionsSection,
    /// `[hooks]` of the user's config.
    pub hooks: HooksSection,
    /// `[mcp]` of the user's config.
    pub mcp: McpSection,
    /// `[mcp_servers]` of the user's config.
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
    /// Which signatures plugins need (the user's config).
    pub signatures: SignaturePolicy,
    /// Which model plays each role: the user's `[models]`, with a trusted
    /// workspace's over it.
    pub models: ModelRoles,
    /// Caps on plugins' completions (the user's config).
    pub plugin_llm: PluginLlmPolicy,
    /// Fallback chains by role: the user's `[fallbacks]`, with a trusted
    /// workspace's over it.
    pub fallbacks: FallbacksSection,
    /// The planner and its bounds: the user's `[planner]`, with a trusted
    /// workspace's over it.
    pub planner: PlannerSection,
    /// Planners' settings: the user's `[planners.NAME]`, with a trusted
    /// workspace's tables over them.
    pub planners: PlannersSection,
    /// Compaction and windows: the user's `[context]`, with a trusted
    /// workspace's over it.
    pub context: ContextSection,
    /// The learning memory: the user's `[memory]`.
    pub memory: MemorySection,
}

impl Setup {
    /// The config's sandbox settings with the session's directories: the
    /// workspace and the added directories (read-write ones writable).
    /// `plugin_host::plugin_host` adds what is hidden and
    /// protected.
    pub fn session_containment(&self) -> Containment {
        let mut containment = self.sandbox.clone();
        // Configuration a link leads to is configuration too.
        containment
            .read_only
            .extend(self.snapshot.link_targets().iter().cloned());
        containment.writable = vec![self.workspace.clone()];
        for (dir, access) in &self.policy.extra_dirs {
            match access {
                Access::ReadWrite => containment.writable.push(dir.clone()),
                Access::ReadOnly => containment.readable.push(dir.clone()),
            }
        }
        containment
    }

    /// Merges the user's config, the workspace's and the flags. The
    /// workspace's config takes effect only as far as its trust allows
    /// (each section's [`Scope`](crate::section::Scope)); when it is not
    /// trusted and `ask` is given (a terminal), `ask` decides, and a yes
    /// is recorded.
    pub fn new(
        cwd: Option<&Path>,
        plugin_flags: &[PathBuf],
        add_dirs: &[PathBuf],
        ask: Option<AskTrust<'_>>,
    ) -> anyhow::Result<Self> {
        let here = std::env::current_dir().context("reading the current directory")?;
        let workspace = absolute(&here, cwd.unwrap_or(&here));
        let workspace = workspace
            .canonicalize()
            .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
        let kaizen_home = kaizen_home()?;
        let user_file = kaizen_home.join(USER_CONFIG);
        let user = ConfigFile::load(&user_file)?;
        let (trust, snapshot) = decide_trust(&kaizen_home, &workspace, ask)?;
        let trusted = trust == TrustStatus::Trusted;
        let project_file = workspace.join(PROJECT_CONFIG);
        let mut ignored: Vec<String> = snapshot
            .refused()
            .map(|(path, why)| format!("{path}: not read ({why}); it takes no effect"))
            .collect();
        let project = project_config(&snapshot, &project_file, trusted, &mut ignored)?;
        let mut admission = Admission {
            trusted,
            workspace: &workspace,
            notes: &mut ignored,
        };
        let (config, project_permissions) = ConfigFile::effective(
            user,
            &user_file,
            &kaizen_home,
            project,
            &project_file,
            &mut admission,
        )?;
        // What of the workspace's own directories an untrusted workspace
        // does not get.
        let gated = [
            (".kaizen/plugins", "its plugins are not loaded"),
            (
                crate::skills_setup::WORKSPACE_SKILLS,
                "its skills are not used",
            ),
            (
                crate::skills_setup::WORKSPACE_COMMANDS,
                "its commands are not used",
            ),
            (
                crate::skills_setup::WORKSPACE_AGENTS,
                "its agents are not used",
            ),
        ];
        for (dir, what) in gated {
            if !trusted && snapshot.has_dir(dir) {
                ignored.push(format!("{dir}: {what} (the workspace is not trusted)"));
            }
        }
        let mut setup = Self::from_config(config, kaizen_home, workspace, trust, snapshot)?;
        setup.ignored = ignored;
        setup.project_permissions = project_permissions;
        setup.policy.extra_dirs.extend(
            add_dirs
                .iter()
                .map(|dir| (absolute(&here, dir), Access::ReadWrite)),
        );
        setup.plugin_roots.extend(
            plugin_flags
                .iter()
                .map(|dir| (absolute(&here, dir), Origin::Flag)),
        );
        setup.copy_workspace_plugins()?;
        Ok(setup)
    }

    /// What the effective `config` sets, for a session in `workspace`
    /// whose configuration `snapshot` has `trust` (its own plugin
    /// directory loads once trusted).
    fn from_config(
        config: ConfigFile,
        kaizen_home: PathBuf,
        workspace: PathBuf,
        trust: TrustStatus,
        snapshot: ConfigSnapshot,
    ) -> anyhow::Result<Self> {
        let trusted = trust == TrustStatus::Trusted;
        let user_file = kaizen_home.join(USER_CONFIG);
        let mut policy = GrantPolicy {
            data_root: Some(kaizen_home.join("data")),
            ..GrantPolicy::new(&workspace)
        };
        policy.grants = config.grants;
        // A built-in's default grant holds until a config file grants
        // that plugin something itself.
        for (name, grant) in builtins::default_grants() {
            policy.grants.entry(name.to_string()).or_insert(grant);
        }
        if let Some(max) = config.plugins.max_memory_mib {
            policy.max_memory_mib = policy.max_memory_mib.min(max);
        }
        if let Some(max) = config.plugins.max_cpu_seconds {
            policy.max_cpu_seconds = policy.max_cpu_seconds.min(max);
        }
        policy.extra_dirs = config
            .plugins
            .add_dirs
            .iter()
            .map(|dir| (dir.path.clone(), dir.access))
            .collect();
        policy.http_credentials = config.http.credentials;
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
        let mut plugin_roots = vec![(kaizen_home.join("plugins"), Origin::User)];
        plugin_roots.extend(
            config
                .plugins
                .dirs
                .iter()
                .map(|dir| (dir.clone(), Origin::Flag)),
        );
        plugin_roots.extend(
            config
                .plugins
                .workspace_dirs
                .iter()
                .map(|dir| (dir.clone(), Origin::Workspace)),
        );
        if trusted {
            plugin_roots.push((workspace.join(".kaizen").join("plugins"), Origin::Workspace));
        }
        let mut sandbox = Containment {
            allow_degraded: config.sandbox.allow_degraded,
            also_readable: config.sandbox.read.clone(),
            ..Containment::default()
        };
        config.sandbox.lower_limits(&mut sandbox);
        let prices = config
            .pricing
            .into_iter()
            .fold(PriceTable::default(), |prices, (model, price)| {
                prices.with_override(model, price)
            });
        Ok(Self {
            signatures: config.plugins.signatures(&user_file)?,
            plugin_llm: config.plugin_llm.policy(&user_file)?,
            models: model_roles(&config.models, &config.sub_agent_models),
            policy,
            plugin_roots,
            prices,
            sandbox,
            sessions: config.sessions,
            trust,
            snapshot: Arc::new(snapshot),
            workspace_copies: None,
            ignored: Vec::new(),
            workspace,
            kaizen_home,
            user_permissions: config.permissions,
            project_permissions: PermissionsSection::default(),
            hooks: config.hooks,
            mcp: config.mcp,
            mcp_servers: config.mcp_servers,
            fallbacks: config.fallbacks,
            planner: config.planner,
            planners: config.planners,
            context: config.context,
            memory: config.memory,
        })
    }

    /// Points the workspace's plugin directories at copies of what the
    /// snapshot read (in a private directory under `KAIZEN_HOME`, removed
    /// with the setup), so that the code loaded is the code trusted; one
    /// the snapshot did not read (refused, or not there) loads nothing.
    fn copy_workspace_plugins(&mut self) -> anyhow::Result<()> {
        let workspace = self.workspace.clone();
        let mut roots = std::mem::take(&mut self.plugin_roots);
        for (path, origin) in &mut roots {
            if *origin != Origin::Workspace {
                continue;
            }
            let rel = match path.strip_prefix(&workspace) {
                Ok(rel) => rel.to_string_lossy().trim_end_matches('/').to_string(),
                Err(_) => continue,
            };
            if !self.snapshot.has_dir(&rel) {
                *path = PathBuf::new();
                continue;
            }
            let copies = match &self.workspace_copies {
                Some(copies) => copies.clone(),
                None => {
                    let copies = Arc::new(crate::snapshot::copies_dir(&self.kaizen_home)?);
                    self.workspace_copies = Some(copies.clone());
                    copies
                }
            };
            let copy = copies.path().join(&rel);
            self.snapshot.materialize(&rel, &copy)?;
            *path = copy;
        }
        roots.retain(|(path, _)| !path.as_os_str().is_empty());
        self.plugin_roots = roots;
        Ok(())
    }

    /// What the user should hear about the workspace's config: what was
    /// left out and how to trust it; `None` when nothing was.
    pub fn trust_notice(&self) -> Option<String> {
        if self.ignored.is_empty() {
            return None;
        }
        let mut notice = String::from("this workspace's configuration was not applied in full:");
        for line in &self.ignored {
            notice.push_str(&format!("\n  - {line}"));
        }
        if matches!(self.trust, TrustStatus::NotTrusted | TrustStatus::Changed) {
            let why = match self.trust {
                TrustStatus::Changed => "it changed since you trusted it",
                _ => "it has not been trusted",
            };
            notice.push_str(&format!(
                "\nThe workspace is not trusted ({why}). Review its kaizen.toml and .kaizen/, then \
                 run `kaizen trust {}` to let them take effect.",
                self.workspace.display()
            ));
        }
        Some(notice)
    }
}

/// The workspace's configuration, read once, and its trust: from the
/// store, else from `ask` (recorded when it says yes). Non-interactive
/// runs (no `ask`) never trust implicitly.
fn decide_trust(
    kaizen_home: &Path,
    workspace: &Path,
    ask: Option<AskTrust<'_>>,
) -> anyhow::Result<(TrustStatus, ConfigSnapshot)> {
    let config = ConfigSnapshot::read(workspace)?;
    let store = TrustStore::new(kaizen_home);
    let status = store.status(&config)?;
    if !matches!(status, TrustStatus::NotTrusted | TrustStatus::Changed) {
        return Ok((status, config));
    }
    match ask {
        Some(ask) if ask(&config, status) => {
            store.trust(&config)?;
            Ok((TrustStatus::Trusted, config))
        }
        _ => Ok((status, config)),
    }
}

/// The workspace's `kaizen.toml`, from the snapshot. One that does not
/// parse is an error once trusted; before that it is a note and nothing
/// of it applies (a program of a session could have written it, and it
/// must not stop Kaizen from running).
fn project_config(
    snapshot: &ConfigSnapshot,
    file: &Path,
    trusted: bool,
    notes: &mut Vec<String>,
) -> anyhow::Result<ConfigFile> {
    let Some(bytes) = snapshot.file(PROJECT_CONFIG) else {
        return Ok(ConfigFile::default());
    };
    let parsed = std::str::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", file.display()))
        .and_then(|text| ConfigFile::parse(text, file));
    match parsed {
        Ok(config) => Ok(config),
        Err(err) if !trusted => {
            notes.push(format!(
                "{err:#}; it is ignored (the workspace is not trusted)"
            ));
            Ok(ConfigFile::default())
        }
        Err(err) => Err(err),
    }
}
