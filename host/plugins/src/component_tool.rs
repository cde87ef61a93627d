//! A tool served by a component, as the loop sees it.

use crate::runtime::PluginRuntime;
use kaizen_tools::{CallContext, Danger, Tool, ToolFuture, ToolSpec};
use std::sync::Arc;

/// One tool of a loaded plugin.
pub struct ComponentTool {
    spec: ToolSpec,
    runtime: Arc<PluginRuntime>,
}

impl ComponentTool {
    pub(crate) fn new(spec: ToolSpec, runtime: Arc<PluginRuntime>) -> Self {
        Self { spec, runtime }
    }
}

impl Tool for ComponentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> &str {
        &self.runtime.identity.name
    }

    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            self.runtime
                .call(ctx, &self.spec.name, input.to_string())
                .await
        })
    }
}

/// Converts a component's tool description; a schema that is not JSON is
/// reported against the plugin.
pub(crate) fn convert_spec(
    plugin: &str,
    spec: crate::bindings::guest_tools::ToolSpec,
) -> Result<ToolSpec, String> {
    use crate::bindings::types::DangerLevel;
    let input_schema = serde_json::from_str(&spec.input_schema).map_err(|err| {
        format!(
            "plugin `{plugin}`: tool `{}` has an input schema that is not valid JSON ({err})",
            spec.name
        )
    })?;
    Ok(ToolSpec {
        name: spec.name,
        description: spec.description,
        input_schema,
        danger: match spec.danger {
            DangerLevel::Safe => Danger::Safe,
            DangerLevel::Moderate => Danger::Moderate,
            DangerLevel::Dangerous => Danger::Dangerous,
        },
        read_only: spec.read_only,
    })
}
