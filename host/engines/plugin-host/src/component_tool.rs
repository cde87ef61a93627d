//! A tool served by a component, as the loop sees it.

use crate::instance::PluginInstances;
use kaizen_tools::{CallContext, Danger, RuleSubject, Tool, ToolFuture, ToolSpec};
use std::sync::Arc;

/// One tool of a loaded plugin.
pub struct ComponentTool {
    spec: ToolSpec,
    instances: Arc<PluginInstances>,
    subject: Option<RuleSubject>,
    contained: bool,
}

impl ComponentTool {
    pub(crate) fn new(
        spec: ToolSpec,
        instances: Arc<PluginInstances>,
        subject: Option<RuleSubject>,
        contained: bool,
    ) -> Self {
        Self {
            spec,
            instances,
            subject,
            contained,
        }
    }
}

impl Tool for ComponentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> &str {
        &self.instances.identity.name
    }

    fn rule_subject(&self) -> Option<&RuleSubject> {
        self.subject.as_ref()
    }

    fn contained(&self) -> bool {
        self.contained
    }

    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            self.instances
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
            DangerLevel::Moderate => Danger::Medium,
            DangerLevel::Dangerous => Danger::High,
        },
        read_only: spec.read_only,
    })
}
