//! `kaizen plugins list|inspect`: the plugins
//! ([`kaizen_app::plugin_listing`]), shown to people or as JSON.

use kaizen_app::plugin_listing::{self, subscription};
use kaizen_app::plugin_loading::Selection;
use kaizen_plugin_host::{Capabilities, EffectiveGrant, Origin};
use std::fmt::Write as _;
use std::path::Path;

/// `kaizen plugins list`.
pub async fn list(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let set = plugin_listing::plugins(selection, &crate::answerers::to_stderr()).await?;
    if json {
        let rows = plugin_listing::rows(&set);
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
            let by = |who: Option<String>| who.map_or("no".to_string(), |who| format!("by {who}"));
            let integrity = &plugin.integrity;
            let pinned = by(integrity
                .pinned_by
                .as_ref()
                .map(|l| l.display().to_string()));
            let signed = by(integrity.signed_by.clone());
            let _ = writeln!(out, "  pinned:    {pinned}; signed: {signed}");
        }
    }
    for failure in &set.failed {
        let name = failure.plugin_label();
        let (location, origin) = (failure.source.label(), failure.source.origin);
        let _ = writeln!(out, "{name}  FAILED  {location} ({origin})");
        let _ = writeln!(out, "  error:     {}", failure.error.message);
        if let (Some(manifest), Some(grant)) = (&failure.error.manifest, &failure.error.grant) {
            write_capabilities(&mut out, &manifest.capabilities, grant);
        }
    }
    print!("{out}");
    Ok(())
}

fn write_capabilities(out: &mut String, requested: &Capabilities, grant: &EffectiveGrant) {
    let or_none = |items: Vec<String>| match items.is_empty() {
        true => "nothing".to_string(),
        false => items.join("; "),
    };
    let _ = writeln!(out, "  requested: {}", or_none(requested.describe()));
    let _ = writeln!(out, "  granted:   {}", or_none(grant.describe()));
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

/// `kaizen plugins inspect PATH`.
pub async fn inspect(path: &Path, json: bool) -> anyhow::Result<()> {
    let report = plugin_listing::inspect(path).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(out, "component: {}", report.component);
    if let Some(manifest) = &report.manifest {
        let field = |name: &str| manifest[name].as_str().unwrap_or("?").to_string();
        let _ = writeln!(out, "plugin:    {} {}", field("name"), field("version"));
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
            "tool {}{}  (danger: {})\n  {}\n  input schema: {}",
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
