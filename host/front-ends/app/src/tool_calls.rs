//! Tools without a model, as `kaizen tools list|call` use them: every
//! tool the plugins and the workspace's MCP servers provide, and one
//! called directly in a session of its own, as often as asked, timed.

use crate::config::Setup;
use crate::notices::Notices;
use crate::plugin_loading::{Selection, load};
use kaizen_plugin_host::{LoadFailure, PluginSet};
use kaizen_tools::{CallContext, Tool, ToolError, ToolOutput};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The tools a selection provides, loaded.
pub struct Tools {
    setup: Setup,
    set: PluginSet,
}

/// A tool's calls.
pub struct Called {
    /// What the last call returned.
    pub result: Result<ToolOutput, ToolError>,
    /// How long each call after the first took (the first creates the
    /// session's state).
    pub latencies: Vec<Duration>,
}

/// The latencies of repeated calls, summed up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// How many calls were timed.
    pub calls: usize,
    /// The median.
    pub median: Duration,
    /// The 90th percentile.
    pub p90: Duration,
    /// The fastest.
    pub min: Duration,
}

impl Tools {
    /// The plugins the selection names, with the MCP servers started and
    /// their tools in the registry.
    /// What of the configuration did not apply is told to `notices`.
    pub async fn load(selection: &Selection, notices: &Notices) -> anyhow::Result<Self> {
        let (setup, host, mut set) = load(selection, notices).await?;
        let flags = &selection.mcp;
        crate::mcp_servers::start(&setup, host.sandbox(), flags, &mut set.registry, notices)
            .await?;
        Ok(Self { setup, set })
    }

    /// The plugins that did not load (their tools are missing).
    pub fn failures(&self) -> &[LoadFailure] {
        &self.set.failed
    }

    /// Every tool, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.set.registry.tools()
    }

    /// Whether a tool is named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.set.registry.get(name).is_some()
    }

    /// Calls tool `name` with `input` (JSON text) `repeat` times (at
    /// least once) in a fresh session in the workspace.
    pub async fn call(&self, name: &str, input: &str, repeat: u32) -> Called {
        let workspace = self.setup.policy.workspace.clone();
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
        let mut result = self.set.registry.call(&ctx, name, input).await;
        for _ in 1..repeat {
            let started = Instant::now();
            result = self.set.registry.call(&ctx, name, input).await;
            latencies.push(started.elapsed());
        }
        self.set.end_session(&ctx.session_id);
        Called { result, latencies }
    }
}

impl Called {
    /// The timed calls summed up; `None` when only one call was made.
    pub fn latency(&self) -> Option<Latency> {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        let last = sorted.len().checked_sub(1)?;
        let at = |fraction: f64| sorted[(last as f64 * fraction).round() as usize];
        Some(Latency {
            calls: sorted.len(),
            median: at(0.5),
            p90: at(0.9),
            min: at(0.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_sum_up_by_rank() {
        let called = |millis: &[u64]| Called {
            result: Ok(ToolOutput::text("")),
            latencies: millis.iter().map(|&ms| Duration::from_millis(ms)).collect(),
        };
        assert_eq!(called(&[]).latency(), None);
        let ms = Duration::from_millis;
        let latency = called(&[9, 1, 5, 3, 7, 2, 8, 4, 6, 10]).latency().unwrap();
        assert_eq!(latency.calls, 10);
        assert_eq!(
            (latency.min, latency.median, latency.p90),
            (ms(1), ms(6), ms(9))
        );
    }
}
