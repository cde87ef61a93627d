//! Which planner a run uses: `--planner NAME|PATH`, else `[planner] name`
//! in the config; its settings (`[planners.NAME]`) and bounds (`[planner]
//! max-revisions`, `max-candidates`). A planner is a plugin of kind
//! `planner`: a built-in one, one from a plugin directory, or the one at
//! PATH.

use crate::builtins;
use crate::section::{Scope, Section};
use kaizen_loop::{DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_REVISIONS, PlannerSetup};
use kaizen_plugin_host::{Manifest, PluginSet};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `[planner]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PlannerSection {
    /// The planner runs use when `--planner` does not name one.
    pub name: Option<String>,
    /// Revisions a planner's `verify` may get per run.
    pub max_revisions: Option<u32>,
    /// Candidate responses per THINK a planner may ask for.
    pub max_candidates: Option<u32>,
}

impl Section for PlannerSection {
    const KEY: &'static str = "[planner]";
    const SCOPE: Scope = Scope::Trusted;

    fn is_set(&self) -> bool {
        self.name.is_some() || self.max_revisions.is_some() || self.max_candidates.is_some()
    }

    fn merge(&mut self, over: Self) {
        self.name = over.name.or(self.name.take());
        self.max_revisions = over.max_revisions.or(self.max_revisions);
        self.max_candidates = over.max_candidates.or(self.max_candidates);
    }
}

/// `[planners.NAME]`: each planner's settings, as it documents them.
pub type PlannersSection = BTreeMap<String, toml::Table>;

/// A trusted workspace's table for a planner replaces the user's.
impl Section for PlannersSection {
    const KEY: &'static str = "[planners]";
    const SCOPE: Scope = Scope::Trusted;

    fn is_set(&self) -> bool {
        !self.is_empty()
    }

    fn merge(&mut self, over: Self) {
        self.extend(over);
    }
}

/// A `--planner` value: a name, or a plugin directory.
pub enum PlannerChoice {
    /// A planner plugin by name (built-in or in a plugin directory).
    Named(String),
    /// The plugin in this directory (loaded like `--plugins DIR`).
    Dir {
        /// The directory.
        dir: PathBuf,
        /// Its manifest's name.
        name: String,
    },
}

impl PlannerChoice {
    /// Reads `value`: a path when it names a directory or has a `/`.
    pub fn parse(value: &str) -> anyhow::Result<Self> {
        let path = Path::new(value);
        if !value.contains('/') && !path.is_dir() {
            return Ok(Self::Named(value.to_string()));
        }
        let manifest =
            Manifest::load(path).map_err(|err| anyhow::anyhow!("--planner {value}: {err}"))?;
        Ok(Self::Dir {
            dir: path.to_path_buf(),
            name: manifest.plugin.name,
        })
    }

    /// The planner's plugin name.
    pub fn name(&self) -> &str {
        match self {
            Self::Named(name) | Self::Dir { name, .. } => name,
        }
    }
}

/// The planner named `name` among the loaded plugins, with its settings
/// and bounds; an error says why there is none.
pub fn planner_for(
    name: &str,
    section: &PlannerSection,
    settings: &PlannersSection,
    plugins: &PluginSet,
) -> anyhow::Result<PlannerSetup> {
    let loaded = plugins
        .loaded
        .iter()
        .find(|plugin| plugin.manifest.plugin.name == name);
    let Some(plugin) = loaded else {
        if let Some(failure) = plugins
            .failed
            .iter()
            .find(|failure| failure.error.name.as_deref() == Some(name))
        {
            anyhow::bail!(
                "the planner `{name}` did not load: {}",
                failure.error.message
            );
        }
        let mut known: Vec<&str> = builtins::PLANNERS.to_vec();
        known.extend(
            plugins
                .loaded
                .iter()
                .filter(|plugin| plugin.planner_handle().is_some())
                .map(|plugin| plugin.manifest.plugin.name.as_str()),
        );
        anyhow::bail!(
            "there is no planner `{name}`; the planners are {} (or give a plugin directory)",
            known.join(", ")
        );
    };
    let planner = plugin.planner_handle().ok_or_else(|| {
        anyhow::anyhow!(
            "the plugin `{name}` is not a planner (its kinds are {:?})",
            plugin.manifest.plugin.kinds
        )
    })?;
    let own = settings.get(name).cloned().unwrap_or_default();
    Ok(PlannerSetup {
        planner,
        settings: serde_json::to_value(own)?,
        max_revisions: section.max_revisions.unwrap_or(DEFAULT_MAX_REVISIONS),
        max_candidates: section.max_candidates.unwrap_or(DEFAULT_MAX_CANDIDATES),
    })
}
