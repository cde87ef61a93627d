//! The plugin host of a session and of Kaizen's own commands: its compile
//! cache, and the containment its programs run in, with Kaizen's state
//! hidden, configuration protected and the user's deny rules enforced.

use crate::config::Setup;
use crate::trust::PROTECTED_NAMES;
use kaizen_permissions::{DeniedPaths, Permissions};
use kaizen_plugin_host::interaction::{Interaction, NoUser};
use kaizen_plugin_host::{
    DEFAULT_MAX_MEMORY_MIB, EngineOptions, HostOptions, PluginHost, ProtectedPaths,
    SignaturePolicy, existing_matches,
};
use kaizen_sandbox::Containment;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    pub fn of(setup: &Setup, permissions: &Permissions) -> Self {
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
