//! `kaizen tools list|call`: the tools the plugins and MCP servers
//! provide, and one called without a model ([`kaizen_app::tool_calls`]),
//! shown to people or as JSON.

use kaizen_app::plugin_loading::Selection;
use kaizen_app::tool_calls::{Latency, Tools};
use serde_json::{Value, json};

/// `kaizen tools list`.
pub async fn list(selection: &Selection, json: bool) -> anyhow::Result<()> {
    let loaded = Tools::load(selection, &crate::answerers::to_stderr()).await?;
    warn_of_failures(&loaded);
    let tools: Vec<_> = loaded.tools().collect();
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
            "{:width$}  {:<20} {:<8} {}{}",
            spec.name,
            format!("({})", tool.source()),
            spec.danger.name().to_ascii_uppercase(),
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
    let tools = Tools::load(selection, &crate::answerers::to_stderr()).await?;
    // The tool may be missing because its plugin did not load: say why.
    if !tools.has(name) {
        warn_of_failures(&tools);
    }
    let called = tools.call(name, &input, repeat).await;
    if let Some(latency) = called.latency() {
        eprintln!("{}", latency_summary(name, &latency));
    }
    match called.result {
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

/// Why the plugins that did not load did not.
fn warn_of_failures(tools: &Tools) {
    for failure in tools.failures() {
        eprintln!("warning: {}", failure.summary());
    }
}

/// The latency line of `tools call --repeat`: the first call (which
/// creates per-session state) is left out.
fn latency_summary(name: &str, latency: &Latency) -> String {
    let micros = |at: std::time::Duration| at.as_secs_f64() * 1e6;
    format!(
        "{name}: {} calls after the first: median {:.1} µs, p90 {:.1} µs, min {:.1} µs",
        latency.calls,
        micros(latency.median),
        micros(latency.p90),
        micros(latency.min)
    )
}
