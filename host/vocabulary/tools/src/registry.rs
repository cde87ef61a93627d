//! The registry: every tool of every source under one name space, with
//! argument validation in front of each call.

use crate::spec::{CallContext, Tool, ToolError, ToolErrorKind, ToolOutput, ToolSpec};
use std::collections::HashMap;
use std::sync::Arc;

/// Largest result a tool may return before the registry refuses it (4 MiB).
/// The loop cuts results further before they reach the model; this bound
/// stops a runaway tool from filling memory and session files.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 4 << 20;

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two sources provide a tool of the same name.
    #[error(
        "tool `{name}` is provided by both `{first}` and `{second}`; remove or rename one of them (a plugin's tools are listed by `kaizen plugins inspect`)"
    )]
    Duplicate {
        /// The contested name.
        name: String,
        /// The source registered first.
        first: String,
        /// The source that tried to register it again.
        second: String,
    },
    /// The tool's name is not usable by model APIs.
    #[error(
        "tool name `{name}` from `{source_name}` is invalid: use 1 to 64 ASCII letters, digits, `_` or `-`"
    )]
    InvalidName {
        /// The rejected name.
        name: String,
        /// Where the tool came from.
        source_name: String,
    },
    /// The tool's input schema is not a valid JSON Schema.
    #[error("tool `{name}` from `{source_name}` has an invalid input schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// Where the tool came from.
        source_name: String,
        /// What the schema compiler said.
        reason: String,
    },
}

#[derive(Clone)]
struct Entry {
    tool: Arc<dyn Tool>,
    // Shared so that a subset registry need not compile schemas again.
    validator: Arc<jsonschema::Validator>,
}

/// All tools a session can call.
pub struct ToolRegistry {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    max_output_bytes: usize,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry with the default output bound.
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            by_name: HashMap::new(),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        }
    }

    /// Sets the largest result a tool may return.
    pub fn set_max_output_bytes(&mut self, bytes: usize) {
        self.max_output_bytes = bytes;
    }

    /// Adds a tool. Fails on a duplicate name, an invalid name or an
    /// invalid input schema; the registry is unchanged then.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        self.register_all(vec![tool])
    }

    /// Adds several tools (one plugin's) all or none: if any is refused,
    /// the registry is unchanged.
    pub fn register_all(&mut self, tools: Vec<Arc<dyn Tool>>) -> Result<(), RegistryError> {
        let mut checked = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let spec = tool.spec();
            if !valid_tool_name(&spec.name) {
                return Err(RegistryError::InvalidName {
                    name: spec.name.clone(),
                    source_name: tool.source().to_string(),
                });
            }
            let earlier = self
                .get(&spec.name)
                .or_else(|| tools[..i].iter().find(|t| t.spec().name == spec.name));
            if let Some(first) = earlier {
                return Err(RegistryError::Duplicate {
                    name: spec.name.clone(),
                    first: first.source().to_string(),
                    second: tool.source().to_string(),
                });
            }
            let validator = jsonschema::validator_for(&spec.input_schema).map_err(|err| {
                RegistryError::InvalidSchema {
                    name: spec.name.clone(),
                    source_name: tool.source().to_string(),
                    reason: err.to_string(),
                }
            })?;
            checked.push(validator);
        }
        for (tool, validator) in tools.into_iter().zip(checked) {
            self.by_name
                .insert(tool.spec().name.clone(), self.entries.len());
            self.entries.push(Entry {
                tool,
                validator: Arc::new(validator),
            });
        }
        Ok(())
    }

    /// A registry of the tools for which `keep` holds, sharing them (and
    /// their compiled schemas) with this one: a sub-agent's tool subset.
    pub fn subset(&self, keep: impl Fn(&ToolSpec) -> bool) -> ToolRegistry {
        let mut subset = ToolRegistry {
            max_output_bytes: self.max_output_bytes,
            ..ToolRegistry::new()
        };
        for entry in self.entries.iter().filter(|e| keep(e.tool.spec())) {
            subset
                .by_name
                .insert(entry.tool.spec().name.clone(), subset.entries.len());
            subset.entries.push(entry.clone());
        }
        subset
    }

    /// The specs of every tool, in registration order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|entry| entry.tool.spec())
    }

    /// Every tool, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|entry| &entry.tool)
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name
            .get(name)
            .map(|&index| &self.entries[index].tool)
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Calls tool `name` with `arguments`, the JSON text the model sent.
    /// Every failure comes back as a [`ToolError`] for the model.
    pub async fn call(
        &self,
        ctx: &CallContext,
        name: &str,
        arguments: &str,
    ) -> Result<ToolOutput, ToolError> {
        let entry = self.entry(name)?;
        let input = parse_arguments(name, arguments)?;
        self.call_validated(entry, ctx, &input).await
    }

    /// Calls tool `name` with an already parsed input value.
    pub async fn call_value(
        &self,
        ctx: &CallContext,
        name: &str,
        input: &serde_json::Value,
    ) -> Result<ToolOutput, ToolError> {
        let entry = self.entry(name)?;
        self.call_validated(entry, ctx, input).await
    }

    /// Looks tool `name` up and parses and checks `arguments` (the JSON
    /// text the model sent) against its schema: the tool and its input,
    /// ready for permission checks and hooks before [`Self::call_value`].
    pub fn prepare(
        &self,
        name: &str,
        arguments: &str,
    ) -> Result<(&Arc<dyn Tool>, serde_json::Value), ToolError> {
        let entry = self.entry(name)?;
        let input = parse_arguments(name, arguments)?;
        check_schema(name, &entry.validator, &input)?;
        Ok((&entry.tool, input))
    }

    /// Checks `input` (a hook's replacement, say) against tool `name`'s
    /// schema.
    pub fn check(&self, name: &str, input: &serde_json::Value) -> Result<(), ToolError> {
        let entry = self.entry(name)?;
        check_schema(name, &entry.validator, input)
    }

    fn entry(&self, name: &str) -> Result<&Entry, ToolError> {
        match self.by_name.get(name) {
            Some(&index) => Ok(&self.entries[index]),
            None => Err(self.unknown_tool(name)),
        }
    }

    async fn call_validated(
        &self,
        entry: &Entry,
        ctx: &CallContext,
        input: &serde_json::Value,
    ) -> Result<ToolOutput, ToolError> {
        let name = &entry.tool.spec().name;
        check_schema(name, &entry.validator, input)?;
        let output = entry.tool.call(ctx, input).await?;
        let size = output.size_bytes();
        if size > self.max_output_bytes {
            return Err(ToolError::new(
                ToolErrorKind::ResourceLimit,
                format!(
                    "{name} returned {} of output, more than the {} a tool result may hold; the result was discarded. Ask for less at once (a narrower path or pattern, an offset and limit).",
                    human_bytes(size),
                    human_bytes(self.max_output_bytes)
                ),
            ));
        }
        Ok(output)
    }

    fn unknown_tool(&self, name: &str) -> ToolError {
        let mut names: Vec<&str> = self.specs().map(|spec| spec.name.as_str()).collect();
        names.sort_unstable();
        let hint = names
            .iter()
            .find(|known| known.eq_ignore_ascii_case(name))
            .map(|known| format!(" Did you mean `{known}`? Tool names are case-sensitive."))
            .unwrap_or_default();
        let available = if names.is_empty() {
            "No tools are available in this session.".to_string()
        } else {
            format!("Available tools: {}.", names.join(", "))
        };
        ToolError::new(
            ToolErrorKind::UnknownTool,
            format!("There is no tool named `{name}`.{hint} {available}"),
        )
    }
}

fn parse_arguments(name: &str, arguments: &str) -> Result<serde_json::Value, ToolError> {
    // Models sometimes send an empty string for a tool without parameters.
    if arguments.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    serde_json::from_str(arguments).map_err(|err| {
        ToolError::new(
            ToolErrorKind::InvalidJson,
            format!(
                "The arguments for {name} are not valid JSON ({err}). Send one JSON object that matches the tool's input schema."
            ),
        )
    })
}

fn check_schema(
    name: &str,
    validator: &jsonschema::Validator,
    input: &serde_json::Value,
) -> Result<(), ToolError> {
    let problems: Vec<String> = validator
        .iter_errors(input)
        .take(8)
        .map(|err| {
            let path = err.instance_path().to_string();
            let place = if path.is_empty() {
                "the input".to_string()
            } else {
                format!("`{path}`")
            };
            format!("- {place}: {err}")
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    Err(ToolError::new(
        ToolErrorKind::SchemaViolation,
        format!(
            "The arguments for {name} do not match its input schema:\n{}\nFix these and call {name} again.",
            problems.join("\n")
        ),
    ))
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `1536` → `1.5 KiB`.
fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests;
