//! The operator's configuration: the user's `$KAIZEN_HOME/config.toml`,
//! then the project's `kaizen.toml` (as far as the workspace is trusted:
//! see `trust.rs`), then CLI flags, merged into one [`GrantPolicy`] and the
//! list of plugin directories.

use crate::builtins;
use crate::context_config::ContextSection;
use crate::mcp_servers::McpServerEntry;
use crate::memory_cmd::MemorySection;
use crate::model_config::{FallbacksSection, check_fallbacks, model_roles};
use crate::planner_setup::{PlannerSection, PlannersSection};
use crate::trust::{AskTrust, ConfigSnapshot, TrustStatus, TrustStore};
use anyhow::Context as _;
use kaizen_llm::PriceTable;
use kaizen_plugins::{Access, Capabilities, GrantPolicy, Origin, SignaturePolicy};
use kaizen_runtime::{ModelRoles, PluginLlmPolicy};
use kaizen_sandbox::Containment;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::home::kaizen_home;

pub use crate::config_file::{
    ConfigFile, HooksSection, McpSection, PROJECT_CONFIG, PermissionsSection, SandboxSection,
    SessionsSection, USER_CONFIG,
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
    /// degraded mode); [`crate::plugins_cmd::plugin_host`] completes them
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
    /// [`crate::plugins_cmd::plugin_host`] adds what is hidden and
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
    /// (see [`merge_project`]); when it is not trusted and `ask` is given
    /// (a terminal), `ask` decides, and a yes is recorded.
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
        let signatures = user.plugins.signatures(&user_file)?;
        let plugin_llm = user.plugin_llm.policy(&user_file)?;
        let mut models = model_roles(&user_file, &user.models, &user.sub_agent_models)?;
        let (trust, snapshot) = decide_trust(&kaizen_home, &workspace, ask)?;
        let trusted = trust == TrustStatus::Trusted;
        let project_file = workspace.join(PROJECT_CONFIG);
        let mut ignored: Vec<String> = snapshot
            .refused()
            .map(|(path, why)| format!("{path}: not read ({why}); it takes no effect"))
            .collect();
        let project = project_config(&snapshot, &project_file, trusted, &mut ignored)?;
        let mut planner = user.planner.clone();
        let mut planners = user.planners.clone();
        user.context.check(&user_file)?;
        let mut context = user.context.clone();
        check_fallbacks(&user_file, &user.fallbacks)?;
        let mut fallbacks = user.fallbacks.clone();
        if trusted {
            check_fallbacks(&project_file, &project.fallbacks)?;
            fallbacks.extend(project.fallbacks.clone());
            let theirs = model_roles(&project_file, &project.models, &project.sub_agent_models)?;
            models.roles.extend(theirs.roles);
            models.sub_agents.extend(theirs.sub_agents);
            planner.merge(&project.planner);
            planners.extend(project.planners.clone());
            project.context.check(&project_file)?;
            context.merge(&project.context);
        }

        let mut setup = Self {
            policy: GrantPolicy {
                data_root: Some(kaizen_home.join("data")),
                ..GrantPolicy::new(&workspace)
            },
            plugin_roots: vec![(kaizen_home.join("plugins"), Origin::User)],
            prices: PriceTable::default(),
            sandbox: Containment {
                allow_degraded: user.sandbox.allow_degraded,
                ..Containment::default()
            },
            sessions: SessionsSection::default(),
            trust,
            snapshot: Arc::new(snapshot),
            workspace_copies: None,
            ignored,
            workspace: workspace.clone(),
            kaizen_home,
            user_permissions: user.permissions.clone(),
            project_permissions: project.permissions.clone(),
            hooks: user.hooks.clone(),
            mcp: user.mcp.clone(),
            mcp_servers: user.mcp_servers.clone(),
            signatures,
            models,
            plugin_llm,
            fallbacks,
            planner,
            planners,
            context,
            memory: user.memory.clone(),
        };
        setup.merge_user(&user);
        setup.merge_project(&project, trusted);
        // A built-in's default grant holds until a config file grants
        // that plugin something itself.
        for (name, grant) in builtins::default_grants() {
            setup.policy.grants.entry(name.to_string()).or_insert(grant);
        }
        let policy = &mut setup.policy;
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
        setup.plugin_roots.extend(
            plugin_flags
                .iter()
                .map(|dir| (absolute(&here, dir), Origin::Flag)),
        );
        setup.copy_workspace_plugins()?;
        Ok(setup)
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

    /// The user's own config: everything in it applies.
    fn merge_user(&mut self, user: &ConfigFile) {
        let home = self.kaizen_home.clone();
        for (model, price) in &user.pricing {
            self.prices = std::mem::take(&mut self.prices).with_override(model.clone(), *price);
        }
        for (name, grant) in &user.grants {
            self.grant(name, grant);
        }
        for dir in &user.plugins.add_dirs {
            self.policy
                .extra_dirs
                .push((absolute(&home, &dir.path), dir.access));
        }
        self.plugin_roots.extend(
            user.plugins
                .dirs
                .iter()
                .map(|dir| (absolute(&home, dir), Origin::Flag)),
        );
        self.sandbox.also_readable.extend(
            user.sandbox
                .read
                .iter()
                .map(|dir| absolute(&home, &expand_home(dir))),
        );
        self.lower_limits(user);
        self.sessions.merge(&user.sessions);
    }

    /// The workspace's `kaizen.toml` and `.kaizen/plugins`. Always: limits
    /// (which can only lower the user's) and session settings. Once the
    /// workspace is trusted: grants, and directories and plugin
    /// directories inside the workspace. Never: prices, credentials,
    /// `allow-degraded`, and paths outside the workspace, which only the
    /// user's own config may set. What is left out is listed in
    /// [`Setup::ignored`].
    fn merge_project(&mut self, project: &ConfigFile, trusted: bool) {
        let workspace = self.workspace.clone();
        self.lower_limits(project);
        self.sessions.merge(&project.sessions);
        let file = PROJECT_CONFIG;
        if !project.pricing.is_empty() {
            self.ignore(format!(
                "{file}: [pricing] (prices are set in the user's config only)"
            ));
        }
        if !project.http.credentials.is_empty() {
            self.ignore(format!(
                "{file}: [[http.credentials]] (credentials are set in the user's config only)"
            ));
        }
        if project.mcp.serve_token_env.is_some() {
            self.ignore(format!("{file}: [mcp] (set in the user's config only)"));
        }
        if !project.mcp_servers.is_empty() {
            self.ignore(format!(
                "{file}: [mcp_servers] (MCP servers are set in the user's config, or in the \
                 workspace's .mcp.json)"
            ));
        }
        if !project.hooks.plugins.is_empty()
            || project.hooks.timeout_seconds.is_some()
            || project.hooks.claude.is_some()
            || project.hooks.command_network
        {
            self.ignore(format!(
                "{file}: [hooks] (how hooks run is set in the user's config only)"
            ));
        }
        if project.plugins.require_signature || !project.plugins.trusted_keys.is_empty() {
            self.ignore(format!(
                "{file}: [plugins] require-signature and trusted-keys (which keys to trust is set in the user's config only)"
            ));
        }
        if project.plugin_llm.is_set() {
            self.ignore(format!(
                "{file}: [plugin-llm] (what plugins' completions may use is set in the user's config only)"
            ));
        }
        if !trusted && !project.fallbacks.is_empty() {
            self.ignore(format!(
                "{file}: [fallbacks] (the workspace is not trusted)"
            ));
        }
        if !trusted && (!project.models.is_empty() || !project.sub_agent_models.is_empty()) {
            self.ignore(format!("{file}: [models] (the workspace is not trusted)"));
        }
        if !trusted && (project.planner.is_set() || !project.planners.is_empty()) {
            self.ignore(format!(
                "{file}: [planner] and [planners] (the workspace is not trusted)"
            ));
        }
        if project.memory.is_set() {
            self.ignore(format!(
                "{file}: [memory] (the learning memory is set in the user's config only)"
            ));
        }
        if !trusted && project.context.is_set() {
            self.ignore(format!("{file}: [context] (the workspace is not trusted)"));
        }
        if project.sandbox.allow_degraded {
            self.ignore(format!(
                "{file}: [sandbox] allow-degraded (only the user's config may weaken the sandbox)"
            ));
        }
        let untrusted = |what: &str| format!("{file}: {what} (the workspace is not trusted)");
        if !trusted {
            for name in project.grants.keys() {
                self.ignore(untrusted(&format!("[grants.{name}]")));
            }
            for (what, count) in [
                ("[plugins] add-dirs", project.plugins.add_dirs.len()),
                ("[plugins] dirs", project.plugins.dirs.len()),
                ("[sandbox] read", project.sandbox.read.len()),
            ] {
                if count > 0 {
                    self.ignore(untrusted(what));
                }
            }
            if self.snapshot.has_dir(".kaizen/plugins") {
                self.ignore(
                    ".kaizen/plugins: its plugins are not loaded (the workspace is not trusted)"
                        .to_string(),
                );
            }
            return;
        }
        for (name, grant) in &project.grants {
            self.grant(name, grant);
        }
        let inside = |path: &Path| absolute(&workspace, &expand_home(path));
        for dir in &project.plugins.add_dirs {
            let path = inside(&dir.path);
            match within(&workspace, &path) {
                true => self.policy.extra_dirs.push((path, dir.access)),
                false => self.ignore(outside(file, "[plugins] add-dirs", &path)),
            }
        }
        for dir in &project.plugins.dirs {
            let path = inside(dir);
            match within(&workspace, &path) {
                true => self.plugin_roots.push((path, Origin::Workspace)),
                false => self.ignore(outside(file, "[plugins] dirs", &path)),
            }
        }
        for dir in &project.sandbox.read {
            let path = inside(dir);
            match within(&workspace, &path) {
                true => self.sandbox.also_readable.push(path),
                false => self.ignore(outside(file, "[sandbox] read", &path)),
            }
        }
        self.plugin_roots
            .push((workspace.join(".kaizen").join("plugins"), Origin::Workspace));
    }

    /// Adds `grant` to what plugin `name` (or `*`) is granted.
    fn grant(&mut self, name: &str, grant: &Capabilities) {
        let merged = self
            .policy
            .grants
            .get(name)
            .map_or_else(|| grant.clone(), |existing| existing.union(grant));
        self.policy.grants.insert(name.to_string(), merged);
    }

    /// The strictest maximum wins, so no file can raise a bound another
    /// set.
    fn lower_limits(&mut self, config: &ConfigFile) {
        if let Some(max) = config.plugins.max_memory_mib {
            self.policy.max_memory_mib = self.policy.max_memory_mib.min(max);
        }
        if let Some(max) = config.plugins.max_cpu_seconds {
            self.policy.max_cpu_seconds = self.policy.max_cpu_seconds.min(max);
        }
        lower_sandbox_limits(&mut self.sandbox, &config.sandbox);
    }

    fn ignore(&mut self, what: String) {
        self.ignored.push(what);
    }

    /// What the user should hear about the workspace's config: what was
    /// left out and how to trust it; `None` when nothing was.
    pub fn trust_notice(&self) -> Option<String> {
        if self.ignored.is_empty() {
            return None;
        }
        let mut notice =
            String::from("kaizen: this workspace's configuration was not applied in full:\n");
        for line in &self.ignored {
            notice.push_str(&format!("  - {line}\n"));
        }
        if matches!(self.trust, TrustStatus::NotTrusted | TrustStatus::Changed) {
            let why = match self.trust {
                TrustStatus::Changed => "it changed since you trusted it",
                _ => "it has not been trusted",
            };
            notice.push_str(&format!(
                "The workspace is not trusted ({why}). Review its kaizen.toml and .kaizen/, then \
                 run `kaizen trust {}` to let them take effect.\n",
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

/// True when `path` lies inside `root` (both absolute; `..` not resolved,
/// so a path with `..` counts as outside).
fn within(root: &Path, path: &Path) -> bool {
    path.starts_with(root)
        && !path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
}

fn outside(file: &str, what: &str, path: &Path) -> String {
    format!(
        "{file}: {what} {} (outside the workspace: only the user's config may name it)",
        path.display()
    )
}

/// Adds one file's `[sandbox]` limits: the strictest wins.
pub(crate) fn lower_sandbox_limits(settings: &mut Containment, section: &SandboxSection) {
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
    if let Some(max) = section.max_memory_mib {
        limits.max_memory = limits.max_memory.min(max << 20);
    }
    if let Some(max) = section.tmp_size_mib {
        limits.tmp_size = limits.tmp_size.min(max << 20);
    }
}

pub(crate) fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// `~/rest` as the user's home joined with `rest`; other paths unchanged.
pub(crate) fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}
