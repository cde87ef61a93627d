//! `kaizen plugins list|inspect` and `kaizen tools list`.

use crate::PermissionArgs;
use crate::builtins;
use crate::config::{Setup, kaizen_home};
use crate::guard_setup::{self, PermissionSetup};
use crate::trust::{AskTrust, PROTECTED_NAMES};
use anyhow::Context as _;
use kaizen_permissions::{DeniedPaths, Permissions};
use kaizen_plugins::interaction::{Interaction, NoUser};
use kaizen_plugins::{
    Capabilities, DEFAULT_MAX_MEMORY_MIB, EffectiveGrant, EngineOptions, HostOptions, LoadedPlugin,
    MANIFEST_FILE, Origin, PluginHost, PluginSet, ProtectedPaths, SignaturePolicy,
    existing_matches, sources_in,
};
use kaizen_sandbox::Containment;
use kaizen_tools::CallContext;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which workspace and plugin directories to use.
#[derive(Clone)]
pub struct Selection {
    /// `--cwd`.
    pub cwd: Option<PathBuf>,
    /// `--plugins`.
    pub plugins: Vec<PathBuf>,
    /// `--add-dir`.
    pub add_dirs: Vec<PathBuf>,
}

/// The plugin host with the compile cache in `KAIZEN_CACHE_DIR`, else
/// under `home`, sized for plugins of up to `max_memory_mib`; `interaction`
/// answers plugins' questions, `sandbox` (the config's sandbox settings
/// and the session's directories) is completed into the session's
/// containment, which every program of the session runs under, and
/// `signatures` says which signatures components need.
pub fn plugin_host(
    home: &Path,
    max_memory_mib: u64,
    interaction: Arc<dyn Interaction>,
    mut sandbox: Containment,
    denied: &Denied,
    signatures: &SignaturePolicy,
) -> anyhow::Result<PluginHost> {
    let cache_dir = cache_dir(home)?;
    // Kaizen's own state, the cache of code the host runs and its key: no
    // tool or program may see them, wherever they are. Configuration in a
    // writable directory may be read, never changed.
    let protected = ProtectedPaths {
        read_only_names: PROTECTED_NAMES
            .iter()
            .map(|name| name.to_string())
            .collect(),
        hidden: state_paths(home, &cache_dir),
        denied_read: denied.globs.read.clone(),
        denied_edit: denied.globs.edit.clone(),
        read_only: sandbox.read_only.clone(),
    };
    sandbox.protected_names = protected.read_only_names.clone();
    sandbox.hidden = protected.hidden.clone();
    // Programs are not checked per access: what the deny rules name is
    // covered as it exists when a session starts.
    sandbox.hidden.extend(denied.read_now.iter().cloned());
    sandbox.read_only.extend(denied.edit_now.iter().cloned());
    sandbox.no_exec.extend(denied.programs_now.iter().cloned());
    PluginHost::new(HostOptions {
        cache_dir: Some(cache_dir),
        engine: EngineOptions {
            max_memory_bytes: max_memory_mib << 20,
            ..EngineOptions::default()
        },
        interaction,
        sandbox,
        protected,
        signatures: signatures.clone(),
    })
}

/// Where the compile cache is (`KAIZEN_CACHE_DIR`, else under `home`),
/// checked as a state directory when the variable names it.
fn cache_dir(home: &Path) -> anyhow::Result<PathBuf> {
    match std::env::var_os("KAIZEN_CACHE_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            crate::home::private_state_dir(&dir, "KAIZEN_CACHE_DIR")?;
            Ok(dir)
        }
        None => Ok(home.join("cache").join("components")),
    }
}

/// What no program may see: `KAIZEN_HOME`, the compile cache and its key.
fn state_paths(home: &Path, cache_dir: &Path) -> Vec<PathBuf> {
    let mut key = cache_dir.as_os_str().to_owned();
    key.push(".key");
    vec![
        home.to_path_buf(),
        cache_dir.to_path_buf(),
        PathBuf::from(key),
    ]
}

/// What confines programs Kaizen runs outside a session (toolchain steps
/// of `kaizen plugins build`, `kaizen eval`'s checks): Kaizen's state
/// hidden, configuration read-only, the user's `[sandbox]` settings.
pub fn state_containment(home: &Path) -> anyhow::Result<Containment> {
    let user_file = home.join(crate::config::USER_CONFIG);
    let user = crate::config::ConfigFile::load(&user_file)?;
    let mut containment = Containment {
        protected_names: PROTECTED_NAMES
            .iter()
            .map(|name| name.to_string())
            .collect(),
        hidden: state_paths(home, &cache_dir(home)?),
        allow_degraded: user.sandbox.allow_degraded,
        ..Containment::default()
    };
    user.sandbox.lower_limits(&mut containment);
    Ok(containment)
}

/// A host for looking at components rather than serving a session:
/// nobody answers their questions, no deny rule applies, and the default
/// sandbox settings do (nothing it loads is asked to run a program).
pub fn checking_host(home: &Path, signatures: &SignaturePolicy) -> anyhow::Result<PluginHost> {
    plugin_host(
        home,
        DEFAULT_MAX_MEMORY_MIB,
        Arc::new(NoUser),
        Containment::default(),
        &Denied::default(),
        signatures,
    )
}

/// The canonical path of the plugin directory `path`, which must hold a
/// manifest.
pub fn plugin_dir(path: &Path) -> anyhow::Result<PathBuf> {
    let dir = path
        .canonicalize()
        .with_context(|| format!("{} does not exist", path.display()))?;
    if !dir.join(MANIFEST_FILE).is_file() {
        anyhow::bail!(
            "{} has no {MANIFEST_FILE}: give a plugin project's directory (`kaizen plugins new NAME --lang LANG` makes one)",
            dir.display()
        );
    }
    Ok(dir)
}

/// What the user's deny rules keep from plugins and programs: the globs
/// (checked on every file access by plugins) and what matches them now
/// (covered in the OS sandbox).
#[derive(Debug, Default)]
pub struct Denied {
    /// Absolute globs.
    pub globs: DeniedPaths,
    /// Existing paths not to be read.
    pub read_now: Vec<PathBuf>,
    /// Existing paths not to be changed.
    pub edit_now: Vec<PathBuf>,
    /// The programs deny rules refuse whatever their arguments, where they
    /// are on the sandbox's `PATH` (their real paths).
    pub programs_now: Vec<PathBuf>,
}

impl Denied {
    /// The deny rules of `permissions`, anchored at the workspace and
    /// looked for in the directories plugins are granted.
    fn of(setup: &Setup, permissions: &Permissions) -> Self {
        let globs = permissions.denied_paths(&setup.workspace);
        let mut roots = vec![setup.workspace.clone()];
        roots.extend(setup.policy.extra_dirs.iter().map(|(dir, _)| dir.clone()));
        Self {
            read_now: existing_matches(&globs.read, &roots),
            edit_now: existing_matches(&globs.edit, &roots),
            programs_now: programs_on_path(&globs.programs),
            globs,
        }
    }
}

/// Where each of `names` is on the sandbox's `PATH`: every real file a
/// name leads to.
fn programs_on_path(names: &[String]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for name in names {
        for dir in std::env::split_paths(kaizen_sandbox::SANDBOX_PATH) {
            if let Ok(real) = dir.join(name).canonicalize()
                && real.is_file()
                && !found.contains(&real)
            {
                found.push(real);
            }
        }
    }
    found
}

/// Everything a command that runs plugins needs: the configuration, the
/// plugin host, the loaded plugins, and the permission rules.
pub struct Loaded {
    /// Config and flags merged.
    pub setup: Setup,
    /// The plugin host.
    pub host: PluginHost,
    /// The plugins.
    pub plugins: PluginSet,
    /// The permission rules and mode.
    pub permissions: PermissionSetup,
}

/// Loads the built-ins and every plugin directory the selection names;
/// nobody answers plugins' questions, and nobody is asked to trust the
/// workspace.
pub async fn load(selection: &Selection) -> anyhow::Result<(Setup, PluginHost, PluginSet)> {
    let flags = PermissionArgs::default();
    let loaded = load_with(selection, Arc::new(NoUser), None, &flags, None).await?;
    Ok((loaded.setup, loaded.host, loaded.plugins))
}

/// [`load`], with `interaction` answering plugins' questions and `ask`
/// deciding whether an untrusted workspace's config is trusted (see
/// [`Setup::new`]). `run_planner` is `None` for a listing (every
/// built-in), and for a run the planner `--planner` names, if any (the
/// built-in planners load only when the run uses one). What of the
/// workspace's config did not apply is told on stderr.
pub async fn load_with(
    selection: &Selection,
    interaction: Arc<dyn Interaction>,
    ask: Option<AskTrust<'_>>,
    flags: &PermissionArgs,
    run_planner: Option<Option<&str>>,
) -> anyhow::Result<Loaded> {
    let for_run = run_planner.is_some();
    let setup = Setup::new(
        selection.cwd.as_deref(),
        &selection.plugins,
        &selection.add_dirs,
        ask,
    )?;
    if let Some(notice) = setup.trust_notice() {
        eprint!("{notice}");
    }
    let permissions = guard_setup::permissions(&setup, flags)?;
    let denied = Denied::of(&setup, &permissions.permissions);
    let host = plugin_host(
        &setup.kaizen_home,
        setup.policy.max_memory_mib,
        interaction,
        setup.session_containment(),
        &denied,
        &setup.signatures,
    )?;
    // Listings show every built-in; a run loads the built-in hooks it uses.
    let mut sources = match run_planner {
        Some(flag) => {
            let planner = flag.or(setup.planner.name.as_deref());
            let mut sources = builtins::sources_for_run(&setup.hooks.builtins, planner);
            if let Some(name) = planner {
                sources
                    .extend(builtins::from_source(&setup.kaizen_home, name, host.sandbox()).await?);
            }
            sources
        }
        None => {
            let mut sources = builtins::sources();
            sources.extend(builtins::already_built(&setup.kaizen_home)?);
            sources
        }
    };
    sources.extend(sources_in(&setup.plugin_roots));
    let mut plugins = PluginSet::load(&host, &sources, &setup.policy).await;
    // A run's MCP servers live as long as their tools in the registry.
    if for_run {
        crate::mcp_servers::start(&setup, host.sandbox(), &mut plugins.registry).await?;
    }
    Ok(Loaded {
        setup,
        host,
        plugins,
        permissions,
    })
}

/// `kaizen plugins list`.
pub async fn list(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let (_, _, set) = load(selection).await?;
    if json {
        let mut rows: Vec<Value> = set.loaded.iter().map(loaded_json).collect();
        rows.extend(set.failed.iter().map(|failure| {
            let manifest = failure.error.manifest.as_deref();
            json!({
                "name": failure.error.name,
                "version": manifest.map(|m| &m.plugin.version),
                "kinds": manifest.map(|m| &m.plugin.kinds),
                "origin": failure.source.origin,
                "location": failure.source.label(),
                "status": "failed",
                "tools": [],
                "requested": manifest.map(|m| &m.capabilities),
                "granted": failure.error.grant.as_deref(),
                "error": failure.error.message,
            })
        }));
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if set.loaded.is_empty() && set.failed.is_empty() {
        println!(
            "No plugins found. Put plugin directories in .kaizen/plugins, $KAIZEN_HOME/plugins, or pass --plugins DIR."
        );
        return Ok(());
    }
    let mut out = String::new();
    for plugin in &set.loaded {
        let m = &plugin.manifest.plugin;
        let kinds: Vec<String> = m.kinds.iter().map(|k| k.to_string()).collect();
        let _ = writeln!(
            out,
            "{} {}  [{}]  {} ({}), kaizen:plugin@{}",
            m.name,
            m.version,
            kinds.join(", "),
            plugin.source.label(),
            plugin.source.origin,
            plugin.contract
        );
        let tools: Vec<&str> = plugin.tools.iter().map(|t| t.name.as_str()).collect();
        if !tools.is_empty() {
            let _ = writeln!(out, "  tools:     {}", tools.join(", "));
        }
        let hooks: Vec<String> = plugin.hook_subscriptions.iter().map(subscription).collect();
        if !hooks.is_empty() {
            let _ = writeln!(out, "  hooks:     {}", hooks.join(", "));
        }
        write_capabilities(&mut out, &plugin.manifest.capabilities, &plugin.grant);
        if plugin.source.origin != Origin::Builtin {
            let integrity = &plugin.integrity;
            let pinned = integrity
                .pinned_by
                .as_ref()
                .map_or("no".to_string(), |lock| format!("by {}", lock.display()));
            let signed = integrity
                .signed_by
                .as_ref()
                .map_or("no".to_string(), |key| format!("by {key}"));
            let _ = writeln!(out, "  pinned:    {pinned}; signed: {signed}");
        }
    }
    for failure in &set.failed {
        let name = failure.plugin_label();
        let _ = writeln!(
            out,
            "{name}  FAILED  {} ({})",
            failure.source.label(),
            failure.source.origin
        );
        let _ = writeln!(out, "  error:     {}", failure.error.message);
        if let (Some(manifest), Some(grant)) = (&failure.error.manifest, &failure.error.grant) {
            write_capabilities(&mut out, &manifest.capabilities, grant);
        }
    }
    print!("{out}");
    Ok(())
}

fn loaded_json(plugin: &LoadedPlugin) -> Value {
    let m = &plugin.manifest.plugin;
    json!({
        "name": m.name,
        "version": m.version,
        "kinds": m.kinds,
        "origin": plugin.source.origin,
        "location": plugin.source.label(),
        "status": "loaded",
        "contract": plugin.contract,
        "stateful": m.stateful,
        "tools": plugin.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
        "hooks": plugin.hook_subscriptions.iter().map(subscription).collect::<Vec<_>>(),
        "requested": plugin.manifest.capabilities,
        "granted": *plugin.grant,
        "pinned_by": plugin.integrity.pinned_by,
        "signed_by": plugin.integrity.signed_by,
        "error": Value::Null,
    })
}

/// A hook subscription as listings show it: `PreToolUse(Bash)`.
fn subscription(sub: &kaizen_hooks::Subscription) -> String {
    use kaizen_hooks::Matcher;
    let matcher = match &sub.matcher {
        Matcher::Any => String::new(),
        Matcher::Names(names) => format!("({})", names.join("|")),
        Matcher::Regex(regex) => format!("({})", regex.as_str()),
    };
    format!("{}{matcher}", sub.event)
}

fn write_capabilities(out: &mut String, requested: &Capabilities, grant: &EffectiveGrant) {
    let requested = describe_request(requested);
    let granted = describe_grant(grant);
    let _ = writeln!(out, "  requested: {}", or_none(&requested));
    let _ = writeln!(out, "  granted:   {}", or_none(&granted));
    if !grant.denied.is_empty() {
        let _ = writeln!(out, "  refused:   {}", grant.denied.join("; "));
    }
    let _ = writeln!(
        out,
        "  limits:    {} MiB memory, {} s per call",
        grant.limits.memory_bytes >> 20,
        grant.limits.cpu_time.as_secs_f64()
    );
}

fn or_none(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join("; ")
    }
}

fn describe_request(caps: &Capabilities) -> Vec<String> {
    let mut items: Vec<String> = caps
        .filesystem
        .iter()
        .map(|rule| format!("filesystem {} ({})", rule.path, rule.access))
        .collect();
    if let Some(process) = &caps.process {
        items.push(process_line(&process.programs, process.network));
    }
    if !caps.http.is_empty() {
        items.push(format!("http {}", caps.http.join(", ")));
    }
    if !caps.env.is_empty() {
        items.push(format!("env {}", caps.env.join(", ")));
    }
    items.extend(flags(caps.interaction, caps.agent, caps.llm, caps.parallel));
    if caps.data_dir {
        items.push("data-dir".into());
    }
    items
}

fn describe_grant(grant: &EffectiveGrant) -> Vec<String> {
    let mut items: Vec<String> = grant
        .filesystem
        .iter()
        .map(|p| format!("filesystem {} ({})", p.path.display(), p.access))
        .collect();
    if let Some(process) = &grant.process {
        items.push(process_line(&process.programs, process.network));
    }
    if !grant.http.is_empty() {
        let hosts: Vec<String> = grant.http.iter().map(|h| h.to_string()).collect();
        items.push(format!("http {}", hosts.join(", ")));
    }
    if !grant.env.is_empty() {
        items.push(format!("env {}", grant.env.join(", ")));
    }
    items.extend(flags(
        grant.interaction,
        grant.agent,
        grant.llm,
        grant.parallel,
    ));
    if let Some(dir) = &grant.data_dir {
        items.push(format!("data-dir {}", dir.display()));
    }
    items
}

fn process_line(programs: &[String], network: bool) -> String {
    let network = if network {
        "with network"
    } else {
        "no network"
    };
    format!("process {} ({network})", programs.join(", "))
}

fn flags(interaction: bool, agent: bool, llm: bool, parallel: bool) -> Vec<String> {
    [
        (interaction, "interaction"),
        (agent, "agent"),
        (llm, "llm"),
        (parallel, "parallel"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| name.to_string())
    .collect()
}

/// `kaizen plugins inspect PATH`.
pub async fn inspect(path: &Path, json: bool) -> anyhow::Result<()> {
    let host = checking_host(&kaizen_home()?, &SignaturePolicy::default())?;
    let report = kaizen_plugins::inspect(&host, path)
        .await
        .map_err(anyhow::Error::msg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(out, "component: {}", report.component);
    if let Some(manifest) = &report.manifest {
        let _ = writeln!(
            out,
            "plugin:    {} {}",
            manifest["name"].as_str().unwrap_or("?"),
            manifest["version"].as_str().unwrap_or("?")
        );
    }
    let _ = writeln!(out, "imports:");
    for import in &report.imports {
        let _ = writeln!(out, "  {import}");
    }
    let _ = writeln!(out, "exports:");
    for export in &report.exports {
        let _ = writeln!(out, "  {export}");
    }
    if let Some(err) = &report.tools_error {
        let _ = writeln!(out, "tools: could not be listed: {err}");
    }
    for tool in &report.tools {
        let _ = writeln!(
            out,
            "tool {}{}  ({:?})\n  {}\n  input schema: {}",
            tool.name,
            if tool.read_only { " [read-only]" } else { "" },
            tool.danger,
            tool.description.replace('\n', "\n  "),
            serde_json::to_string_pretty(&tool.input_schema)?.replace('\n', "\n  ")
        );
    }
    print!("{out}");
    Ok(())
}

/// [`load`], with the MCP servers started and their tools in the
/// registry.
async fn load_with_mcp(selection: &Selection) -> anyhow::Result<(Setup, PluginSet)> {
    let (setup, host, mut set) = load(selection).await?;
    crate::mcp_servers::start(&setup, host.sandbox(), &mut set.registry).await?;
    Ok((setup, set))
}

/// `kaizen tools list`.
pub async fn tools(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let (_, set) = load_with_mcp(selection).await?;
    for failure in &set.failed {
        eprintln!("warning: {}", failure.summary());
    }
    let tools: Vec<_> = set.registry.tools().collect();
    if json {
        let rows: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                json!({
                    "name": spec.name,
                    "plugin": tool.source(),
                    "description": spec.description,
                    "input_schema": spec.input_schema,
                    "danger": spec.danger,
                    "read_only": spec.read_only,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if tools.is_empty() {
        println!("No tools: no plugin that provides tools loaded (see `kaizen plugins list`).");
    }
    let width = tools.iter().map(|t| t.spec().name.len()).max().unwrap_or(0);
    for tool in tools {
        let spec = tool.spec();
        let summary = spec.description.lines().next().unwrap_or_default();
        println!(
            "{:width$}  {:<20} {}{}",
            spec.name,
            format!("({})", tool.source()),
            if spec.read_only { "[read-only] " } else { "" },
            summary
        );
    }
    Ok(())
}

/// `kaizen tools call NAME [INPUT]`.
pub async fn call(
    selection: &Selection,
    name: &str,
    input: Option<String>,
    json: bool,
    repeat: u32,
) -> anyhow::Result<()> {
    let input = match input {
        Some(input) => input,
        None => std::io::read_to_string(std::io::stdin())?,
    };
    let (setup, set) = load_with_mcp(selection).await?;
    // The tool may be missing because its plugin did not load: say why.
    if !set.registry.tools().any(|tool| tool.spec().name == name) {
        for failure in &set.failed {
            eprintln!("warning: {}", failure.summary());
        }
    }
    let workspace = setup.policy.workspace.clone();
    let ctx = CallContext {
        session_id: format!("cli-{}", std::process::id()),
        call_id: "call-1".into(),
        workspace: workspace.clone(),
        cwd: workspace,
        // A fresh session: nothing was read before it.
        notes: Default::default(),
        sub_agents: Default::default(),
        completions: Default::default(),
        history: Default::default(),
    };
    let mut latencies = Vec::with_capacity(repeat as usize);
    let mut result = set.registry.call(&ctx, name, &input).await;
    for _ in 1..repeat {
        let started = std::time::Instant::now();
        result = set.registry.call(&ctx, name, &input).await;
        latencies.push(started.elapsed());
    }
    set.end_session(&ctx.session_id);
    if !latencies.is_empty() {
        eprintln!("{}", latency_summary(name, &mut latencies));
    }
    match result {
        Ok(output) if json => println!("{}", serde_json::to_string_pretty(&output)?),
        Ok(output) => println!("{}", output.joined_text()),
        Err(err) if json => {
            println!("{}", serde_json::to_string_pretty(&err)?);
            anyhow::bail!("{name} failed ({:?})", err.kind);
        }
        Err(err) => anyhow::bail!("{name} failed: {}", err.message),
    }
    Ok(())
}

/// The latency line of `tools call --repeat`: the first call (which
/// creates per-session state) is left out.
fn latency_summary(name: &str, latencies: &mut [std::time::Duration]) -> String {
    latencies.sort();
    let at = |fraction: f64| {
        let index = ((latencies.len() - 1) as f64 * fraction).round() as usize;
        latencies[index].as_secs_f64() * 1e6
    };
    format!(
        "{name}: {} calls after the first: median {:.1} µs, p90 {:.1} µs, min {:.1} µs",
        latencies.len(),
        at(0.5),
        at(0.9),
        at(0.0)
    )
}
