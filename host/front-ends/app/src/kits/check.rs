//! Checking a freshly built plugin the way a session loads it: beside the
//! built-ins (a tool name they use is a clash), granted exactly what its
//! manifest requests (an import it does not request is refused), its tools
//! listed and their schemas compiled.

use super::Project;
use crate::builtins;
use crate::plugin_host::checking_host;
use anyhow::bail;
use kaizen_plugin_host::{
    GrantPolicy, Location, Origin, Pin, PluginSet, PluginSource, SignaturePolicy,
};
use std::fmt::Write as _;

/// Loads the project's component; what it provides, as lines for the
/// user; an error says why a session could not load it.
pub async fn report(project: &Project) -> anyhow::Result<String> {
    let home = crate::home::kaizen_home()?;
    let host = checking_host(&home, &SignaturePolicy::default())?;
    let name = &project.manifest.plugin.name;
    let mut policy = GrantPolicy::new(&project.dir);
    policy.data_root = Some(home.join("data"));
    policy
        .grants
        .insert(name.clone(), project.manifest.capabilities.clone());
    let mut sources = builtins::sources();
    sources.push(PluginSource {
        origin: Origin::Flag,
        location: Location::Dir(project.dir.clone()),
        pin: Pin::Unpinned,
    });
    let set = PluginSet::load(&host, &sources, &policy).await;
    if let Some(failure) = set.failed.iter().find(|f| f.source.origin == Origin::Flag) {
        bail!(
            "built {}, but it does not load: {}",
            project.output.display(),
            failure.error.message
        );
    }
    let Some(plugin) = set.loaded.iter().find(|p| p.source.origin == Origin::Flag) else {
        bail!("built {}, but it was not loaded", project.output.display());
    };
    let size = std::fs::metadata(&project.output).map_or(0, |m| m.len());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "built {} ({:.1} MiB): plugin `{name}` {}, loads as a session would load it",
        project.output.display(),
        size as f64 / (1 << 20) as f64,
        plugin.manifest.plugin.version,
    );
    for tool in &plugin.tools {
        let description = tool.description.split_whitespace().collect::<Vec<_>>();
        let _ = writeln!(out, "  tool {}: {}", tool.name, description.join(" "));
    }
    if !plugin.hook_subscriptions.is_empty() {
        let _ = writeln!(
            out,
            "  hooks: {} subscription(s)",
            plugin.hook_subscriptions.len()
        );
    }
    Ok(out)
}
