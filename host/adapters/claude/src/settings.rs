//! Claude Code's settings files, as far as Kaizen uses them: `permissions`
//! and `hooks`. Every other key is left alone.

use anyhow::Context as _;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The settings files of a project, in the order Claude Code reads them.
pub const PROJECT_FILES: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];

/// The directory of the user's Claude Code settings: `CLAUDE_CONFIG_DIR`,
/// else `~/.claude`.
pub fn user_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::home_dir().map(|home| home.join(".claude"))
}

/// One settings file.
#[derive(Debug, Clone, Default)]
pub struct ClaudeSettings {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its `permissions`.
    pub permissions: SettingsPermissions,
    /// Its `hooks`, by event name.
    pub hooks: BTreeMap<String, Vec<MatcherGroup>>,
}

/// The `permissions` object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsPermissions {
    /// Rules that let calls run.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules that ask first.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Rules that refuse.
    #[serde(default)]
    pub deny: Vec<String>,
    /// The permission mode (`default`, `acceptEdits`, `plan`, ...).
    #[serde(default)]
    pub default_mode: Option<String>,
}

/// Hooks of one event that share a matcher.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct MatcherGroup {
    /// Which tools (or sources, agent types, ...) the hooks run for;
    /// empty or absent for all.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The hooks.
    #[serde(default)]
    pub hooks: Vec<HookCommand>,
}

/// One hook entry.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookCommand {
    /// `command` is what Kaizen runs; other types (`prompt`, `agent`) are
    /// reported and skipped.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The shell command.
    #[serde(default)]
    pub command: String,
    /// Seconds it may take (Claude Code's default: 60).
    #[serde(default)]
    pub timeout: Option<f64>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    permissions: SettingsPermissions,
    #[serde(default)]
    hooks: BTreeMap<String, Vec<MatcherGroup>>,
}

impl ClaudeSettings {
    /// Reads `path`; `Ok(None)` when there is no such file. A file that is
    /// not valid JSON (or whose `permissions`/`hooks` have the wrong shape)
    /// is an error naming it.
    pub fn load(path: &Path) -> anyhow::Result<Option<Self>> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
        };
        Self::parse(&text, path).map(Some)
    }

    /// Parses `text`, the content of `path` (named in errors and kept as
    /// the settings' path).
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        let file: File = serde_json::from_str(text).map_err(|err| {
            anyhow::anyhow!(
                "{} is not valid Claude Code settings ({err}); fix it or move it away",
                path.display()
            )
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            permissions: file.permissions,
            hooks: file.hooks,
        })
    }

    /// True when the file sets no rule, mode or hook.
    pub fn is_empty(&self) -> bool {
        let p = &self.permissions;
        p.allow.is_empty()
            && p.ask.is_empty()
            && p.deny.is_empty()
            && p.default_mode.is_none()
            && self
                .hooks
                .values()
                .all(|groups| groups.iter().all(|g| g.hooks.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_permissions_and_hooks_and_ignores_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{
              "model": "opus", "env": {"X": "1"},
              "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"], "defaultMode": "acceptEdits"},
              "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}]}
            }"#,
        )
        .unwrap();
        let settings = ClaudeSettings::load(&path).unwrap().unwrap();
        assert_eq!(settings.permissions.allow, ["Bash(npm run test:*)"]);
        assert_eq!(settings.permissions.deny, ["Read(./.env)"]);
        assert_eq!(
            settings.permissions.default_mode.as_deref(),
            Some("acceptEdits")
        );
        let group = &settings.hooks["PreToolUse"][0];
        assert_eq!(group.matcher.as_deref(), Some("Bash"));
        assert_eq!(group.hooks[0].command, "guard.sh");
        assert_eq!(group.hooks[0].timeout, Some(5.0));
        assert!(!settings.is_empty());
        assert!(
            ClaudeSettings::load(&dir.path().join("none.json"))
                .unwrap()
                .is_none()
        );
        std::fs::write(&path, "{ not json").unwrap();
        let err = ClaudeSettings::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("settings.json") && err.contains("not valid"),
            "{err}"
        );
    }
}
