//! What the plugins are, for `kaizen plugins list|inspect` and any other
//! front end: every plugin the selection finds, loaded or not (each as a
//! JSON row, for programs), hook subscriptions as listings name them, and
//! a component's inspection.

use crate::config::kaizen_home;
use crate::notices::Notices;
use crate::plugin_host::checking_host;
use crate::plugin_loading::{Selection, load};
use kaizen_plugin_host::{Inspection, LoadFailure, LoadedPlugin, PluginSet, SignaturePolicy};
use serde_json::{Value, json};
use std::path::Path;

/// Every plugin the selection finds (the built-ins included), loaded or
/// not; what of the configuration did not apply is told to `notices`.
pub async fn plugins(selection: &Selection, notices: &Notices) -> anyhow::Result<PluginSet> {
    Ok(load(selection, notices).await?.2)
}

/// Each plugin of `set` as a JSON object: what it is, where it came from,
/// what it requested and was granted, and why it failed, if it did.
pub fn rows(set: &PluginSet) -> Vec<Value> {
    let mut rows: Vec<Value> = set.loaded.iter().map(loaded_row).collect();
    rows.extend(set.failed.iter().map(failed_row));
    rows
}

fn loaded_row(plugin: &LoadedPlugin) -> Value {
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

fn failed_row(failure: &LoadFailure) -> Value {
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
}

/// A hook subscription as listings show it: `PreToolUse(Bash)`.
pub fn subscription(sub: &kaizen_hooks::Subscription) -> String {
    use kaizen_hooks::Matcher;
    let matcher = match &sub.matcher {
        Matcher::Any => String::new(),
        Matcher::Names(names) => format!("({})", names.join("|")),
        Matcher::Regex(regex) => format!("({})", regex.as_str()),
    };
    format!("{}{matcher}", sub.event)
}

/// The component at `path` (or a plugin directory's): its imports and
/// exports, manifest, and tools.
pub async fn inspect(path: &Path) -> anyhow::Result<Inspection> {
    let host = checking_host(&kaizen_home()?, &SignaturePolicy::default())?;
    kaizen_plugin_host::inspect(&host, path)
        .await
        .map_err(anyhow::Error::msg)
}
