//! All plugins of a session: loaded in order, their tools merged into one
//! registry, and every failure kept for the user to see.

use crate::discovery::PluginSource;
use crate::grant::GrantPolicy;
use crate::host::{LoadError, LoadedPlugin, PluginHost};
use kaizen_tools::ToolRegistry;

/// A plugin that did not load.
#[derive(Debug, Clone)]
pub struct LoadFailure {
    /// Where it came from.
    pub source: PluginSource,
    /// Why.
    pub error: LoadError,
}

impl LoadFailure {
    /// The plugin's name, or where it came from when its manifest did not
    /// get as far as naming it.
    pub fn plugin_label(&self) -> String {
        self.error
            .name
            .clone()
            .unwrap_or_else(|| self.source.label())
    }

    /// One line for warnings: `plugin NAME did not load: WHY`.
    pub fn summary(&self) -> String {
        format!(
            "plugin {} did not load: {}",
            self.plugin_label(),
            self.error.message
        )
    }
}

/// The loaded plugins, the failures, and the merged tool registry.
pub struct PluginSet {
    /// Plugins that loaded, in load order.
    pub loaded: Vec<LoadedPlugin>,
    /// Plugins that did not.
    pub failed: Vec<LoadFailure>,
    /// Every tool of every loaded plugin.
    pub registry: ToolRegistry,
}

impl PluginSet {
    /// Loads `sources` in order. A plugin whose name was already loaded, or
    /// one of whose tools clashes with an earlier plugin's, fails as a whole
    /// with a message naming both; the others are unaffected.
    pub async fn load(host: &PluginHost, sources: &[PluginSource], policy: &GrantPolicy) -> Self {
        let mut set = PluginSet {
            loaded: Vec::new(),
            failed: Vec::new(),
            registry: ToolRegistry::new(),
        };
        for source in sources {
            match host.load(source, policy).await {
                Ok(plugin) => set.admit(plugin),
                Err(error) => set.failed.push(LoadFailure {
                    source: source.clone(),
                    error,
                }),
            }
        }
        set
    }

    fn admit(&mut self, plugin: LoadedPlugin) {
        let name = &plugin.manifest.plugin.name;
        let reject = |message: String| LoadFailure {
            source: plugin.source.clone(),
            error: LoadError {
                name: Some(name.clone()),
                message,
                manifest: Some(Box::new(plugin.manifest.clone())),
                grant: Some(plugin.grant.clone()),
            },
        };
        if let Some(first) = self.loaded.iter().find(|p| &p.manifest.plugin.name == name) {
            let failure = reject(format!(
                "a plugin named `{name}` is already loaded from {}; rename or remove one of them",
                first.source.label()
            ));
            self.failed.push(failure);
            return;
        }
        if let Err(err) = self.registry.register_all(plugin.tool_handles()) {
            let failure = reject(err.to_string());
            self.failed.push(failure);
            return;
        }
        self.loaded.push(plugin);
    }

    /// Releases what every plugin keeps for `session`.
    pub fn end_session(&self, session: &str) {
        for plugin in &self.loaded {
            plugin.end_session(session);
        }
    }
}
