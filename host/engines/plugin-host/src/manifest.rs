//! `plugin.toml`: what a plugin is and which capabilities it requests.

use crate::caps::Capabilities;
use crate::limits::Limits;
use kaizen_tools::{Danger, RuleSubject, SubjectKind, ToolSpec};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The file name of a plugin's manifest.
pub const MANIFEST_FILE: &str = "plugin.toml";

// `CONTRACT_VERSION` and `SUPPORTED_CONTRACTS`, from the directories in
// `wit/` (see the build script).
include!(concat!(env!("OUT_DIR"), "/contract.rs"));

/// What a plugin provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    /// Exports `kaizen:plugin/tools`.
    Tool,
    /// Exports `kaizen:plugin/hooks`.
    Hook,
    /// Exports `kaizen:plugin/planning`.
    Planner,
}

impl PluginKind {
    /// The contract interface a component of this kind exports, without
    /// its version (`kaizen:plugin/tools`).
    pub fn export_interface(self) -> &'static str {
        match self {
            Self::Tool => "kaizen:plugin/tools",
            Self::Hook => "kaizen:plugin/hooks",
            Self::Planner => "kaizen:plugin/planning",
        }
    }
}

impl fmt::Display for PluginKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Tool => "tool",
            Self::Hook => "hook",
            Self::Planner => "planner",
        })
    }
}

/// A parsed and checked `plugin.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Identity and shape of the plugin.
    pub plugin: PluginSection,
    /// Capabilities the plugin requests.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// Resource limits the plugin asks for.
    #[serde(default)]
    pub limits: Limits,
    /// What permission rules' specifiers match in each tool's input, by
    /// tool name: `Bash = { command = "command" }` makes `Bash(npm test:*)`
    /// match the `command` field. Kinds: `command`, `read-path`,
    /// `edit-path`, `url`, `name`.
    #[serde(default, rename = "rule-subjects")]
    pub rule_subjects: BTreeMap<String, BTreeMap<String, String>>,
    /// Each tool's danger level on the five-step scale, by tool name:
    /// `Deploy = "critical"`. The component declares one of the contract's
    /// three levels; this refines it within its tier or raises it (see
    /// [`Manifest::leveled`]).
    #[serde(default)]
    pub danger: BTreeMap<String, String>,
}

/// The `[plugin]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSection {
    /// Unique plugin name: lowercase letters, digits and `-`.
    pub name: String,
    /// The plugin's own version.
    pub version: String,
    /// One line about the plugin.
    #[serde(default)]
    pub description: String,
    /// The `kaizen:plugin` version the author built against. Only a note:
    /// the host reads the version from the component's own exports.
    #[serde(default)]
    pub contract: Option<String>,
    /// What the plugin provides.
    pub kinds: Vec<PluginKind>,
    /// The component file, relative to the plugin directory.
    #[serde(default)]
    pub component: Option<PathBuf>,
    /// One instance per session instead of one per call.
    #[serde(default)]
    pub stateful: bool,
}

/// Why a manifest could not be used. Each message says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The plugin directory has no manifest.
    #[error(
        "{dir} has no {MANIFEST_FILE}; a plugin directory needs one naming the plugin, its version and kinds (see docs/writing-plugins.md)"
    )]
    Missing {
        /// The plugin directory.
        dir: PathBuf,
    },
    /// The manifest could not be read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        /// The manifest file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The manifest is not valid TOML or has wrong or unknown keys.
    #[error("{path} is not a valid plugin manifest: {message}")]
    Invalid {
        /// The manifest file.
        path: PathBuf,
        /// What the parser said, with the line.
        message: String,
    },
    /// The manifest parsed but a value is unusable.
    #[error("{path}: {message}")]
    Value {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl Manifest {
    /// Reads and checks `dir/plugin.toml`.
    pub fn load(dir: &Path) -> Result<Self, ManifestError> {
        Self::load_text(dir).map(|(manifest, _)| manifest)
    }

    /// [`Self::load`], with the manifest's text.
    pub fn load_text(dir: &Path) -> Result<(Self, String), ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(ManifestError::Missing {
                    dir: dir.to_path_buf(),
                });
            }
            Err(source) => return Err(ManifestError::Unreadable { path, source }),
        };
        Self::parse(&text, &path).map(|manifest| (manifest, text))
    }

    /// Parses and checks manifest text; `path` is used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ManifestError> {
        let manifest: Manifest = toml::from_str(text).map_err(|err| ManifestError::Invalid {
            path: path.to_path_buf(),
            message: describe_toml_error(&err),
        })?;
        manifest.check(path)?;
        Ok(manifest)
    }

    fn check(&self, path: &Path) -> Result<(), ManifestError> {
        let value = |message: String| ManifestError::Value {
            path: path.to_path_buf(),
            message,
        };
        let plugin = &self.plugin;
        if !valid_plugin_name(&plugin.name) {
            return Err(value(format!(
                "plugin name `{}` is invalid: use lowercase ASCII letters, digits and `-`, starting with a letter",
                plugin.name
            )));
        }
        if plugin.kinds.is_empty() {
            return Err(value(
                "`kinds` is empty: list what the plugin provides, e.g. kinds = [\"tool\"]".into(),
            ));
        }
        if let Some(component) = &plugin.component
            && (component.is_absolute()
                || component
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir)))
        {
            return Err(value(format!(
                "`component = \"{}\"` must be a path inside the plugin directory",
                component.display()
            )));
        }
        for tool in self.rule_subjects.keys() {
            self.rule_subject(tool).map_err(value)?;
        }
        for (tool, level) in &self.danger {
            level
                .parse::<Danger>()
                .map_err(|err| value(format!("[danger] {tool}: {err}")))?;
        }
        self.capabilities.check().map_err(value)?;
        self.limits.check().map_err(value)
    }

    /// What permission rules match in tool `tool`'s input, as the
    /// `[rule-subjects]` table declares; `Ok(None)` when it declares
    /// nothing for that tool.
    pub fn rule_subject(&self, tool: &str) -> Result<Option<RuleSubject>, String> {
        let Some(entry) = self.rule_subjects.get(tool) else {
            return Ok(None);
        };
        let usage = || {
            format!(
                "[rule-subjects] {tool} must name one input field by kind, e.g. \
                 {tool} = {{ command = \"command\" }}; the kinds are command, read-path, \
                 edit-path, url and name"
            )
        };
        let mut entries = entry.iter();
        let (Some((kind, field)), None) = (entries.next(), entries.next()) else {
            return Err(usage());
        };
        let kind = match kind.as_str() {
            "command" => SubjectKind::Command,
            "read-path" => SubjectKind::ReadPath,
            "edit-path" => SubjectKind::EditPath,
            "url" => SubjectKind::Url,
            "name" => SubjectKind::Name,
            _ => return Err(usage()),
        };
        if field.is_empty() {
            return Err(usage());
        }
        Ok(Some(RuleSubject {
            kind,
            field: field.clone(),
        }))
    }

    /// The component's tools with the `[danger]` table's levels applied.
    /// A level may refine the component's own within its tier (`moderate`
    /// as `low`) or raise it, never lower its tier: a manifest cannot make
    /// a tool that runs programs pass as one that only reads. A `[danger]`
    /// entry naming no tool of the component is an error, as a misspelt
    /// name would otherwise leave a tool at a level its author did not mean.
    pub fn leveled(&self, mut tools: Vec<ToolSpec>) -> Result<Vec<ToolSpec>, String> {
        let plugin = &self.plugin.name;
        for (name, level) in &self.danger {
            let level = level.parse::<Danger>().map_err(|err| err.to_string())?;
            let Some(tool) = tools.iter_mut().find(|tool| &tool.name == name) else {
                let declared: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "plugin `{plugin}`: [danger] names `{name}`, which the component does not \
                     declare (its tools: {})",
                    declared.join(", ")
                ));
            };
            if level.tier() < tool.danger.tier() {
                return Err(format!(
                    "plugin `{plugin}`: [danger] gives `{name}` the level {level}, below the \
                     {} the component declares; a manifest may refine a level within its tier \
                     (low or medium for the contract's moderate, high or critical for \
                     dangerous) or raise it",
                    tool.danger
                ));
            }
            tool.danger = level;
        }
        Ok(tools)
    }

    /// The component file inside `dir`.
    pub fn component_path(&self, dir: &Path) -> PathBuf {
        match &self.plugin.component {
            Some(file) => dir.join(file),
            None => dir.join(format!("{}.wasm", self.plugin.name)),
        }
    }
}

/// Whether `name` may name a plugin: lowercase ASCII letters, digits and
/// `-`, starting with a letter, at most 64 characters.
pub fn valid_plugin_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// TOML errors carry a multi-line snippet; keep the line and the reason,
/// and turn serde's "unknown field" into advice.
fn describe_toml_error(err: &toml::de::Error) -> String {
    let message = err.message().trim().to_string();
    let line = err.span().map(|span| span.start);
    let location = match line {
        Some(_) => err
            .to_string()
            .lines()
            .next()
            .map(|first| first.trim_end_matches(':').to_string())
            .unwrap_or_default(),
        None => String::new(),
    };
    let hint = if message.starts_with("unknown field") {
        " (check the spelling; docs/plugins.md lists every manifest key and capability)"
    } else {
        ""
    };
    if location.is_empty() {
        format!("{message}{hint}")
    } else {
        format!("{location}: {message}{hint}")
    }
}

#[cfg(test)]
mod tests;
