//! `data-dir`: a directory of the plugin's own under `KAIZEN_HOME`
//! (`data/<plugin>`) that outlives sessions, read-write, preopened at its
//! own path and named by [`DATA_DIR_ENV`]. No other plugin and no program
//! can reach it: the filesystem guard hides `KAIZEN_HOME` but for it.

use super::filesystem::{Access, preopen_dir};
use super::{Admission, EffectiveGrant, GrantContext, HostCapability, LoadContext, StoreContext};
use std::path::{Path, PathBuf};

/// The variable in which a plugin granted `data-dir` finds its directory.
pub const DATA_DIR_ENV: &str = "KAIZEN_DATA_DIR";

/// The `data-dir` capability.
pub(crate) struct DataDir;

impl HostCapability for DataDir {
    const NAME: &'static str = "data-dir";
    const ENV_VAR: Option<&'static str> = Some(DATA_DIR_ENV);
    type Request = bool;
    /// The directory.
    type Grant = Option<PathBuf>;
    type Shared = ();
    type State = ();

    fn union(a: &bool, b: &bool) -> bool {
        *a || *b
    }

    /// `<data root>/<plugin>`; refused when the host keeps no plugin data.
    fn intersect(
        cx: &GrantContext<'_>,
        requested: &bool,
        granted: &bool,
        out: &mut EffectiveGrant,
    ) -> Option<PathBuf> {
        if !*requested {
            return None;
        }
        match (cx.data_root, granted) {
            (Some(root), true) => return Some(root.join(cx.plugin)),
            (None, true) => out
                .denied
                .push("data-dir: this host keeps no plugin data".into()),
            (_, false) => out.denied.push("data-dir: not granted".into()),
        }
        None
    }

    fn is_granted(grant: &Option<PathBuf>) -> bool {
        grant.is_some()
    }

    fn is_listed(grant: &Option<PathBuf>) -> bool {
        grant.is_some()
    }

    fn describe_request(request: &bool) -> Vec<String> {
        if *request {
            vec![Self::NAME.to_string()]
        } else {
            Vec::new()
        }
    }

    fn describe_grant(grant: &Option<PathBuf>) -> Vec<String> {
        grant
            .iter()
            .map(|dir| format!("data-dir {}", dir.display()))
            .collect()
    }

    /// Creates the directory, readable by this user only.
    fn admit(cx: &mut Admission<'_>) -> Result<(), String> {
        let Some(dir) = &cx.grant.data_dir else {
            return Ok(());
        };
        create_private_dir(dir).map_err(|err| {
            format!(
                "plugin `{}`: cannot create its data directory {}: {err}",
                cx.plugin,
                dir.display()
            )
        })
    }

    fn env_value(grant: &Option<PathBuf>) -> Option<String> {
        grant.as_ref().map(|dir| dir.to_string_lossy().into_owned())
    }

    fn load(_cx: &LoadContext<'_>) {}

    fn new_state(_shared: &(), cx: &mut StoreContext<'_>) -> anyhow::Result<()> {
        match &cx.grant.data_dir {
            Some(dir) => preopen_dir(
                cx.wasi,
                dir,
                Access::ReadWrite,
                "the plugin's data directory",
            ),
            None => Ok(()),
        }
    }
}

/// Creates `dir` and its parents, readable by this user only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
