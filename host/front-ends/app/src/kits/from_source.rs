//! The built-ins kaizen carries as source (a planner written in Python):
//! built with their kit the first time a run uses one, into
//! `$KAIZEN_HOME/builtins/<name>-<kits digest>`, once per kaizen version
//! (under a lock, as toolchains are installed). Building them when kaizen
//! is built would make every build install that language's toolchain.

use super::toolchain::installed;
use super::{Kit, Lang, Project, copy_tree, embedded, python, toolchain};
use crate::notices::Notices;
use anyhow::Context as _;
use kaizen_plugin_host::{Location, Manifest, Origin, Pin, PluginSource};
use kaizen_sandbox::Containment;
use std::path::{Path, PathBuf};

/// Where the embedded sources are, relative to the kits' root.
const SOURCES: &str = "plugins/";

/// The names of the built-ins carried as source.
pub fn names() -> Vec<&'static str> {
    embedded::paths_under(SOURCES)
        .filter_map(|path| path.strip_suffix("/plugin.toml"))
        .filter(|name| !name.contains('/'))
        .collect()
}

/// Where the built-in `name` is built, with the kits it is built from;
/// `None` when `name` is not carried as source.
fn place(home: &Path, name: &str) -> anyhow::Result<Option<(PathBuf, PathBuf)>> {
    if !names().contains(&name) {
        return Ok(None);
    }
    let root = embedded::extracted(&home.join("kits"))?;
    let digest = root
        .file_name()
        .map(|digest| digest.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = home.join("builtins").join(format!("{name}-{digest}"));
    Ok(Some((dir, root)))
}

/// The directory holding the built-in `name` (manifest and component) if
/// an earlier run built it.
pub fn already_built(home: &Path, name: &str) -> anyhow::Result<Option<PathBuf>> {
    Ok(place(home, name)?
        .map(|(dir, _)| dir)
        .filter(|dir| toolchain::is_installed(dir)))
}

/// The directory holding the built-in `name`, built now with its kit
/// unless an earlier run built it, each step confined by `containment`
/// and what its toolchain says told to `notices`; `None` when `name` is
/// not carried as source.
pub async fn build(
    home: &Path,
    name: &str,
    containment: &Containment,
    notices: &Notices,
) -> anyhow::Result<Option<PathBuf>> {
    let Some((dir, root)) = place(home, name)? else {
        return Ok(None);
    };
    let kit = Kit {
        root,
        toolchains: toolchain::cache_dir(home)?,
        containment: containment.clone(),
        notices: notices.clone(),
    };
    let source = kit.root.join(SOURCES).join(name);
    let lang = Lang::of_project(&source)?;
    let what = format!("the built-in `{name}`, built from its {lang:?} source");
    installed(&dir, &what, notices, async |dir: &Path| {
        copy_tree(&source, dir)?;
        let manifest = Manifest::load(dir).map_err(|err| anyhow::anyhow!("{err}"))?;
        let project = Project {
            output: manifest.component_path(dir),
            dir: dir.to_path_buf(),
            manifest,
        };
        match lang {
            Lang::Python => python::build(&project, &kit).await,
            other => anyhow::bail!("no built-in is carried as {other:?} source"),
        }
    })
    .await
    .with_context(|| {
        format!("the built-in `{name}` is built on first use, which needs python3 and PyPI once")
    })
    .map(Some)
}

/// The built-in `name` that kaizen carries as source, built with its kit
/// (each step confined by `containment`, its toolchain's output told to
/// `notices`) now unless an earlier run built it (a wait on the first
/// run); `None` when `name` is not one.
pub async fn source(
    home: &Path,
    name: &str,
    containment: &Containment,
    notices: &Notices,
) -> anyhow::Result<Option<PluginSource>> {
    let built = build(home, name, containment, notices).await?;
    Ok(built.map(source_in))
}

/// The built-ins carried as source that an earlier run built, for a
/// listing (which does not build them).
pub fn built_sources(home: &Path) -> anyhow::Result<Vec<PluginSource>> {
    let mut sources = Vec::new();
    for name in names() {
        if let Some(dir) = already_built(home, name)? {
            sources.push(source_in(dir));
        }
    }
    Ok(sources)
}

fn source_in(dir: PathBuf) -> PluginSource {
    PluginSource {
        origin: Origin::Builtin,
        location: Location::Dir(dir),
        pin: Pin::Unpinned,
    }
}
