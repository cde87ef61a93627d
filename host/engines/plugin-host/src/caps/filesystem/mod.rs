//! `filesystem`: directories preopened at their own absolute paths, behind
//! a guard that keeps plugins off the configuration and the host's state
//! even inside what they may write.

mod guard;
mod guarded;

pub use guard::{ProtectedPaths, existing_matches};

use super::{
    CapStore, CapView, EffectiveGrant, GrantContext, HostCapability, LoadContext, Slot,
    StoreContext,
};
use guard::FsGuard;
use guarded::{GuardedFs, HasGuardedFs};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::Linker;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

/// Access to a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read files and list directories.
    ReadOnly,
    /// Also create, change and remove.
    ReadWrite,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ReadOnly => "read-only",
            Self::ReadWrite => "read-write",
        })
    }
}

/// A directory and the access to it. `path` may start with `$WORKSPACE`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsRule {
    /// Absolute path, or `$WORKSPACE` optionally followed by `/sub/dir`.
    pub path: String,
    /// What may be done there.
    pub access: Access,
}

/// A directory preopened for a plugin, at its own absolute path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preopen {
    /// The host path, which is also the guest path.
    pub path: PathBuf,
    /// Read-only or read-write.
    pub access: Access,
}

/// The `filesystem` capability.
pub(crate) struct Filesystem;

impl HostCapability for Filesystem {
    const NAME: &'static str = "filesystem";
    type Request = Vec<FsRule>;
    type Grant = Vec<Preopen>;
    type Shared = Arc<FsGuard>;
    type State = Arc<FsGuard>;

    fn check(rules: &Vec<FsRule>) -> Result<(), String> {
        for rule in rules {
            let path = rule.path.as_str();
            let workspace_relative = path == "$WORKSPACE" || path.starts_with("$WORKSPACE/");
            if !workspace_relative && !Path::new(path).is_absolute() {
                return Err(format!(
                    "filesystem path `{path}` must be absolute or start with `$WORKSPACE`"
                ));
            }
            if path.split('/').any(|part| part == "..") {
                return Err(format!("filesystem path `{path}` must not contain `..`"));
            }
        }
        Ok(())
    }

    fn union(a: &Vec<FsRule>, b: &Vec<FsRule>) -> Vec<FsRule> {
        super::merged(a, b)
    }

    /// The workspace read-write, and the directories added with
    /// `--add-dir` or config.
    fn default_grant(cx: &GrantContext<'_>) -> Vec<FsRule> {
        let workspace = FsRule {
            path: "$WORKSPACE".into(),
            access: Access::ReadWrite,
        };
        let extra = cx.extra_dirs.iter().map(|(dir, access)| FsRule {
            path: dir.to_string_lossy().into_owned(),
            access: *access,
        });
        std::iter::once(workspace).chain(extra).collect()
    }

    /// Directory trees intersect: a request inside a grant gets the
    /// request; a grant inside a request gets the grant (so a request for
    /// `/` read-only yields every granted directory, read-only). Access is
    /// the lower of the two.
    fn intersect(
        cx: &GrantContext<'_>,
        requested: &Vec<FsRule>,
        granted: &Vec<FsRule>,
        out: &mut EffectiveGrant,
    ) -> Vec<Preopen> {
        let grants: Vec<(PathBuf, Access)> = granted
            .iter()
            .map(|g| (resolve(cx, &g.path), g.access))
            .collect();
        let mut preopens: Vec<Preopen> = Vec::new();
        for rule in requested {
            let want = resolve(cx, &rule.path);
            let mut found = false;
            let mut reduced = false;
            let mut add = |path: PathBuf, access: Access| {
                found = true;
                reduced |= access < rule.access;
                match preopens.iter_mut().find(|p| p.path == path) {
                    Some(existing) => existing.access = existing.access.max(access),
                    None => preopens.push(Preopen { path, access }),
                }
            };
            // The best grant covering the whole request, if any.
            let covering = grants
                .iter()
                .filter(|(dir, _)| want.starts_with(dir))
                .map(|(_, access)| (*access).min(rule.access))
                .max();
            if let Some(access) = covering {
                add(want.clone(), access);
            } else {
                for (dir, access) in grants.iter().filter(|(dir, _)| dir.starts_with(&want)) {
                    add(dir.clone(), (*access).min(rule.access));
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
        preopens
    }

    fn is_granted(grant: &Vec<Preopen>) -> bool {
        !grant.is_empty()
    }

    fn describe_request(rules: &Vec<FsRule>) -> Vec<String> {
        rules
            .iter()
            .map(|rule| format!("filesystem {} ({})", rule.path, rule.access))
            .collect()
    }

    fn describe_grant(grant: &Vec<Preopen>) -> Vec<String> {
        grant
            .iter()
            .map(|p| format!("filesystem {} ({})", p.path.display(), p.access))
            .collect()
    }

    fn load(cx: &LoadContext<'_>) -> Arc<FsGuard> {
        Arc::new(FsGuard::new(
            &writable_dirs(cx.grant),
            cx.grant.data_dir.as_deref(),
            &cx.host.protected,
        ))
    }

    /// Preopens the granted directories; when the call's directory lies
    /// inside one it is also preopened as `.`, which is how WASI programs
    /// resolve relative paths.
    fn new_state(guard: &Arc<FsGuard>, cx: &mut StoreContext<'_>) -> anyhow::Result<Arc<FsGuard>> {
        for preopen in &cx.grant.filesystem {
            preopen_dir(cx.wasi, &preopen.path, preopen.access, "granted directory")?;
        }
        let cwd_grant = cx.cwd.and_then(|cwd| {
            cx.grant
                .filesystem
                .iter()
                .find(|p| cwd.starts_with(&p.path))
                .map(|p| (cwd, p.access))
        });
        if let Some((cwd, access)) = cwd_grant {
            cx.wasi
                .preopened_dir(cwd, ".", perms_for(access))
                .map_err(|err| {
                    anyhow::anyhow!("cannot open the working directory {}: {err}", cwd.display())
                })?;
            cx.wasi.initial_cwd(cwd.to_string_lossy());
        }
        Ok(guard.clone())
    }
}

/// `path` with `$WORKSPACE` resolved to the session's workspace.
fn resolve(cx: &GrantContext<'_>, path: &str) -> PathBuf {
    match path.strip_prefix("$WORKSPACE") {
        Some("") => cx.workspace.to_path_buf(),
        Some(rest) => cx.workspace.join(rest.trim_start_matches('/')),
        None => PathBuf::from(path),
    }
}

/// Preopens `dir` at its own path; `what` names it in the error.
pub(crate) fn preopen_dir(
    wasi: &mut WasiCtxBuilder,
    dir: &Path,
    access: Access,
    what: &str,
) -> anyhow::Result<()> {
    wasi.preopened_dir(dir, dir.to_string_lossy().as_ref(), perms_for(access))
        .map(|_| ())
        .map_err(|err| anyhow::anyhow!("cannot open {what} {}: {err}", dir.display()))
}

fn perms_for(access: Access) -> FsPerms {
    match access {
        Access::ReadOnly => FsPerms::ReadOnly,
        Access::ReadWrite => FsPerms::ReadWrite,
    }
}

/// The directories `grant` gives with `access`.
pub(crate) fn dirs_with(grant: &EffectiveGrant, access: Access) -> Vec<PathBuf> {
    grant
        .filesystem
        .iter()
        .filter(|preopen| preopen.access == access)
        .map(|preopen| preopen.path.clone())
        .collect()
}

/// The directories `grant` lets the plugin write.
fn writable_dirs(grant: &EffectiveGrant) -> Vec<PathBuf> {
    dirs_with(grant, Access::ReadWrite)
}

/// Links `wasi:filesystem/types` behind the plugin's guard, over
/// wasmtime-wasi's own (which must be linked already).
pub(crate) fn link_guarded<T: CapStore>(linker: &mut Linker<T>) -> anyhow::Result<()>
where
    T::Caps: Slot<Filesystem>,
{
    linker.allow_shadowing(true);
    wasmtime_wasi::p2::bindings::filesystem::types::add_to_linker::<T, HasGuardedFs>(
        linker,
        |store| guarded_fs(store.view::<Filesystem>()),
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The filesystem as the plugin reaches it: wasmtime-wasi's, behind the
/// plugin's guard.
fn guarded_fs(view: CapView<'_, Filesystem>) -> GuardedFs<'_> {
    let CapView {
        wasi, table, state, ..
    } = view;
    GuardedFs {
        inner: WasiFilesystemCtxView {
            ctx: wasi.filesystem(),
            table,
        },
        guard: state,
    }
}
