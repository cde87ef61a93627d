//! `kaizen plugins list|inspect` and `kaizen tools list`.

use kaizen_app::config::Setup;
use kaizen_app::config::kaizen_home;
use kaizen_app::plugin_host::checking_host;
use kaizen_app::plugin_loading::{Selection, load};
use kaizen_plugins::{
    Capabilities, EffectiveGrant, LoadedPlugin, Origin, PluginSet, SignaturePolicy,
};
use kaizen_tools::CallContext;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;

/// `kaizen plugins list`.
pub async fn list(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let (_, _, set) = load(selection).await?;
    if json {
        let mut rows: Vec<Value> = set.loaded.iter().map(loaded_json).collect();
        rows.extend(set.failed.iter().map(|failure| {
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
        }));
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
            let integrity = &plugin.integrity;
            let pinned = integrity
                .pinned_by
                .as_ref()
                .map_or("no".to_string(), |lock| format!("by {}", lock.display()));
            let signed = integrity
                .signed_by
                .as_ref()
                .map_or("no".to_string(), |key| format!("by {key}"));
            let _ = writeln!(out, "  pinned:    {pinned}; signed: {signed}");
        }
    }
    for failure in &set.failed {
        let name = failure.plugin_label();
        let _ = writeln!(
            out,
            "{name}  FAILED  {} ({})",
            failure.source.label(),
            failure.source.origin
        );
        let _ = writeln!(out, "  error:     {}", failure.error.message);
        if let (Some(manifest), Some(grant)) = (&failure.error.manifest, &failure.error.grant) {
            write_capabilities(&mut out, &manifest.capabilities, grant);
        }
    }
    print!("{out}");
    Ok(())
}

fn loaded_json(plugin: &LoadedPlugin) -> Value {
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

/// A hook subscription as listings show it: `PreToolUse(Bash)`.
fn subscription(sub: &kaizen_hooks::Subscription) -> String {
    use kaizen_hooks::Matcher;
    let matcher = match &sub.matcher {
        Matcher::Any => String::new(),
        Matcher::Names(names) => format!("({})", names.join("|")),
        Matcher::Regex(regex) => format!("({})", regex.as_str()),
    };
    format!("{}{matcher}", sub.event)
}

fn write_capabilities(out: &mut String, requested: &Capabilities, grant: &EffectiveGrant) {
    let requested = requested.describe();
    let granted = grant.describe();
    let _ = writeln!(out, "  requested: {}", or_none(&requested));
    let _ = writeln!(out, "  granted:   {}", or_none(&granted));
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

fn or_none(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join("; ")
    }
}

/// `kaizen plugins inspect PATH`.
pub async fn inspect(path: &Path, json: bool) -> anyhow::Result<()> {
    let host = checking_host(&kaizen_home()?, &SignaturePolicy::default())?;
    let report = kaizen_plugins::inspect(&host, path)
        .await
        .map_err(anyhow::Error::msg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(out, "component: {}", report.component);
    if let Some(manifest) = &report.manifest {
        let _ = writeln!(
            out,
            "plugin:    {} {}",
            manifest["name"].as_str().unwrap_or("?"),
            manifest["version"].as_str().unwrap_or("?")
        );
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
            "tool {}{}  ({:?})\n  {}\n  input schema: {}",
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

/// [`load`], with the MCP servers started and their tools in the
/// registry.
async fn load_with_mcp(selection: &Selection) -> anyhow::Result<(Setup, PluginSet)> {
    let (setup, host, mut set) = load(selection).await?;
    kaizen_app::mcp_servers::start(&setup, host.sandbox(), &mut set.registry).await?;
    Ok((setup, set))
}

/// `kaizen tools list`.
pub async fn tools(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let (_, set) = load_with_mcp(selection).await?;
    for failure in &set.failed {
        eprintln!("warning: {}", failure.summary());
    }
    let tools: Vec<_> = set.registry.tools().collect();
    if json {
        let rows: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                json!({
                    "name": spec.name,
                    "plugin": tool.source(),
                    "description": spec.description,
                    "input_schema": spec.input_schema,
                    "danger": spec.danger,
                    "read_only": spec.read_only,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if tools.is_empty() {
        println!("No tools: no plugin that provides tools loaded (see `kaizen plugins list`).");
    }
    let width = tools.iter().map(|t| t.spec().name.len()).max().unwrap_or(0);
    for tool in tools {
        let spec = tool.spec();
        let summary = spec.description.lines().next().unwrap_or_default();
        println!(
            "{:width$}  {:<20} {}{}",
            spec.name,
            format!("({})", tool.source()),
            if spec.read_only { "[read-only] " } else { "" },
            summary
        );
    }
    Ok(())
}

/// `kaizen tools call NAME [INPUT]`.
pub async fn call(
    selection: &Selection,
    name: &str,
    input: Option<String>,
    json: bool,
    repeat: u32,
) -> anyhow::Result<()> {
    let input = match input {
        Some(input) => input,
        None => std::io::read_to_string(std::io::stdin())?,
    };
    let (setup, set) = load_with_mcp(selection).await?;
    // The tool may be missing because its plugin did not load: say why.
    if !set.registry.tools().any(|tool| tool.spec().name == name) {
        for failure in &set.failed {
            eprintln!("warning: {}", failure.summary());
        }
    }
    let workspace = setup.policy.workspace.clone();
    let ctx = CallContext {
        session_id: format!("cli-{}", std::process::id()),
        call_id: "call-1".into(),
        workspace: workspace.clone(),
        cwd: workspace,
        // A fresh session: nothing was read before it.
        notes: Default::default(),
        sub_agents: Default::default(),
        completions: Default::default(),
        history: Default::default(),
    };
    let mut latencies = Vec::with_capacity(repeat as usize);
    let mut result = set.registry.call(&ctx, name, &input).await;
    for _ in 1..repeat {
        let started = std::time::Instant::now();
        result = set.registry.call(&ctx, name, &input).await;
        latencies.push(started.elapsed());
    }
    set.end_session(&ctx.session_id);
    if !latencies.is_empty() {
        eprintln!("{}", latency_summary(name, &mut latencies));
    }
    match result {
        Ok(output) if json => println!("{}", serde_json::to_string_pretty(&output)?),
        Ok(output) => println!("{}", output.joined_text()),
        Err(err) if json => {
            println!("{}", serde_json::to_string_pretty(&err)?);
            anyhow::bail!("{name} failed ({:?})", err.kind);
        }
        Err(err) => anyhow::bail!("{name} failed: {}", err.message),
    }
    Ok(())
}

/// The latency line of `tools call --repeat`: the first call (which
/// creates per-session state) is left out.
fn latency_summary(name: &str, latencies: &mut [std::time::Duration]) -> String {
    latencies.sort();
    let at = |fraction: f64| {
        let index = ((latencies.len() - 1) as f64 * fraction).round() as usize;
        latencies[index].as_secs_f64() * 1e6
    };
    format!(
        "{name}: {} calls after the first: median {:.1} µs, p90 {:.1} µs, min {:.1} µs",
        latencies.len(),
        at(0.5),
        at(0.9),
        at(0.0)
    )
}
