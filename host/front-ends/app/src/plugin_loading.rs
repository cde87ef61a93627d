//! The plugins of a session: the plugin host (its compile cache, the
//! session's containment with Kaizen's state hidden and configuration
//! protected), and the plugins a selection of directories names, loaded
//! under the effective configuration.

use crate::builtins;
use crate::config::Setup;
use crate::guard_setup::{self, PermissionSetup};
use crate::notices::Notices;
use crate::permission_flags::PermissionArgs;
use crate::plugin_host::{Denied, plugin_host};
use crate::trust::AskTrust;
use kaizen_plugin_host::interaction::{Interaction, NoUser};
use kaizen_plugin_host::{PluginHost, PluginSet, sources_in};
use std::path::PathBuf;
use std::sync::Arc;

/// Which workspace, plugin directories and MCP servers to use.
#[derive(Clone, Default)]
pub struct Selection {
    /// `--cwd`.
    pub cwd: Option<PathBuf>,
    /// `--plugins`.
    pub plugins: Vec<PathBuf>,
    /// `--add-dir`.
    pub add_dirs: Vec<PathBuf>,
    /// `--mcp-config`, `--strict-mcp-config`, and the driving program's
    /// own servers.
    pub mcp: crate::mcp_flags::McpFlags,
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
    /// The session's skills, slash commands and agent files.
    pub catalogue: Arc<kaizen_claude::catalogue::Catalogue>,
}

/// Loads the built-ins and every plugin directory the selection names;
/// nobody answers plugins' questions, and nobody is asked to trust the
/// workspace.
pub async fn load(
    selection: &Selection,
    notices: &Notices,
) -> anyhow::Result<(Setup, PluginHost, PluginSet)> {
    let flags = PermissionArgs::default();
    let loaded = load_with(selection, Arc::new(NoUser), None, &flags, None, notices).await?;
    Ok((loaded.setup, loaded.host, loaded.plugins))
}

/// [`load`], with `interaction` answering plugins' questions and `ask`
/// deciding whether an untrusted workspace's config is trusted (see
/// [`Setup::new`]). `run_planner` is `None` for a listing (every
/// built-in), and for a run the planner `--planner` names, if any (the
/// built-in planners load only when the run uses one). What of the
/// workspace's config did not apply is told to `notices`.
pub async fn load_with(
    selection: &Selection,
    interaction: Arc<dyn Interaction>,
    ask: Option<AskTrust<'_>>,
    flags: &PermissionArgs,
    run_planner: Option<Option<&str>>,
    notices: &Notices,
) -> anyhow::Result<Loaded> {
    let for_run = run_planner.is_some();
    let setup = Setup::new(
        selection.cwd.as_deref(),
        &selection.plugins,
        &selection.add_dirs,
        ask,
    )?;
    if let Some(notice) = setup.trust_notice() {
        notices.note(notice);
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
                sources.extend(
                    crate::kits::from_source::source(
                        &setup.kaizen_home,
                        name,
                        host.sandbox(),
                        notices,
                    )
                    .await?,
                );
            }
            sources
        }
        None => {
            let mut sources = builtins::sources();
            sources.extend(crate::kits::from_source::built_sources(&setup.kaizen_home)?);
            sources
        }
    };
    sources.extend(sources_in(&setup.plugin_roots));
    let mut plugins = PluginSet::load(&host, &sources, &setup.policy).await;
    let catalogue = Arc::new(crate::skills_setup::catalogue(&setup, notices));
    crate::skills_setup::register(&catalogue, &mut plugins.registry, notices);
    // A run's MCP servers live as long as their tools in the registry.
    if for_run {
        let flags = &selection.mcp;
        crate::mcp_servers::start(
            &setup,
            host.sandbox(),
            flags,
            &mut plugins.registry,
            notices,
        )
        .await?;
    }
    Ok(Loaded {
        setup,
        host,
        plugins,
        permissions,
        catalogue,
    })
}
