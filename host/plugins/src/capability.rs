//! Capabilities: what a manifest requests and what an operator grants use
//! the same shape, so the effective grant is their intersection.

use crate::http_rule::HostPattern;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Access to a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read files and list directories.
    ReadOnly,
    /// Also create, change and remove.
    ReadWrite,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ReadOnly => "read-only",
            Self::ReadWrite => "read-write",
        })
    }
}

/// A directory and the access to it. `path` may start with `$WORKSPACE`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsRule {
    /// Absolute path, or `$WORKSPACE` optionally followed by `/sub/dir`.
    pub path: String,
    /// What may be done there.
    pub access: Access,
}

/// Running programs in the OS sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessCapability {
    /// Program names the plugin may start; `*` for any.
    #[serde(default)]
    pub programs: Vec<String>,
    /// Whether started programs get network access.
    #[serde(default)]
    pub network: bool,
}

/// A set of capabilities: the `[capabilities]` table of a manifest, or a
/// `[grants.NAME]` table of the operator's config.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Directories, preopened at their own absolute paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filesystem: Vec<FsRule>,
    /// Programs the plugin may run through the `process` import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessCapability>,
    /// Hosts reachable through `wasi:http`: `host`, `*.domain`, `*`, each
    /// with an optional `scheme://` and `:port`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http: Vec<String>,
    /// Environment variables passed from the host (`*` in a grant: any).
    /// Names that look like credentials are never passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// The `interaction` import: ask the user, report progress.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interaction: bool,
    /// The `agent` import: run sub-agents.
    #[serde(default, skip_serializing_if = "is_false")]
    pub agent: bool,
    /// The `llm` import: budgeted model completions.
    #[serde(default, skip_serializing_if = "is_false")]
    pub llm: bool,
    /// The `parallel` import: run its own tools in several instances at
    /// once.
    #[serde(default, skip_serializing_if = "is_false")]
    pub parallel: bool,
    /// A directory of its own that outlives sessions, under `KAIZEN_HOME`
    /// (`data/<plugin>`), which no other plugin and no program can reach:
    /// where an audit log lives.
    #[serde(default, rename = "data-dir", skip_serializing_if = "is_false")]
    pub data_dir: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Capabilities {
    /// Checks values serde cannot: path forms and host patterns.
    pub fn check(&self) -> Result<(), String> {
        for rule in &self.filesystem {
            let path = rule.path.as_str();
            let workspace_relative = path == "$WORKSPACE" || path.starts_with("$WORKSPACE/");
            if !workspace_relative && !std::path::Path::new(path).is_absolute() {
                return Err(format!(
                    "filesystem path `{path}` must be absolute or start with `$WORKSPACE`"
                ));
            }
            if path.split('/').any(|part| part == "..") {
                return Err(format!("filesystem path `{path}` must not contain `..`"));
            }
        }
        for pattern in &self.http {
            HostPattern::parse(pattern)
                .map_err(|err| format!("http pattern `{pattern}`: {err}"))?;
        }
        if let Some(process) = &self.process
            && let Some(bad) = process.programs.iter().find(|p| p.is_empty())
        {
            return Err(format!("process program `{bad}` is empty"));
        }
        if let Some(bad) = self.env.iter().find(|name| !valid_env_name(name)) {
            return Err(format!(
                "env name `{bad}` is invalid: use letters, digits and `_` (or `*` in a grant)"
            ));
        }
        Ok(())
    }

    /// The union of two capability sets (for layering grants).
    pub fn union(&self, other: &Capabilities) -> Capabilities {
        fn merged<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Vec<T> {
            let mut out = a.to_vec();
            out.extend(b.iter().filter(|item| !a.contains(item)).cloned());
            out
        }
        let process = match (&self.process, &other.process) {
            (Some(a), Some(b)) => Some(ProcessCapability {
                programs: merged(&a.programs, &b.programs),
                network: a.network || b.network,
            }),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Capabilities {
            filesystem: merged(&self.filesystem, &other.filesystem),
            process,
            http: merged(&self.http, &other.http),
            env: merged(&self.env, &other.env),
            interaction: self.interaction || other.interaction,
            agent: self.agent || other.agent,
            llm: self.llm || other.llm,
            data_dir: self.data_dir || other.data_dir,
            parallel: self.parallel || other.parallel,
        }
    }
}

fn valid_env_name(name: &str) -> bool {
    name == "*" || (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// True for variable names that hold credentials. They never reach a plugin
/// whatever a grant says: provider keys live only in the host.
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|marker| upper.contains(marker))
}

/// Why `value` looks like a credential, when it does: a URL carrying a
/// password (`scheme://user:password@host`), a token with a well-known
/// prefix (API keys, personal access tokens, cloud keys, JWTs, private
/// keys), or the value of one of the host's own credential variables
/// (those [`is_secret_env_name`] names). Environment grants pass names the
/// operator chose; this keeps a secret that rides in an innocent name
/// (`DATABASE_URL`, say) from reaching a plugin.
pub fn secret_in_value(value: &str) -> Option<&'static str> {
    if url_with_password(value) {
        return Some("a URL with a password");
    }
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_live_",
        "sk_test_",
        "rk_live_",
        "pk_live_",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xoxs-",
        "xapp-",
        "AKIA",
        "ASIA",
        "AIza",
        "ya29.",
        "npm_",
        "pypi-",
        "hf_",
        "dop_v1_",
        "shpat_",
        "SG.",
        "Bearer ",
        "Basic ",
        "-----BEGIN",
    ];
    let trimmed = value.trim_start();
    if PREFIXES.iter().any(|prefix| trimmed.starts_with(prefix)) {
        return Some("a well-known token prefix");
    }
    if looks_like_jwt(trimmed) {
        return Some("a JSON web token");
    }
    let host_secret = std::env::vars_os().any(|(name, secret)| {
        is_secret_env_name(&name.to_string_lossy()) && secret.len() >= 8 && secret == value
    });
    host_secret.then_some("the value of one of the host's credential variables")
}

/// `scheme://user:password@host...`: userinfo with a password.
fn url_with_password(value: &str) -> bool {
    value.split_whitespace().any(|word| {
        let Some((_, rest)) = word.split_once("://") else {
            return false;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority.rsplit_once('@').is_some_and(|(userinfo, _)| {
            userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty())
        })
    })
}

/// Three base64url parts separated by dots, the first a JSON header.
fn looks_like_jwt(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() == 3
        && value.starts_with("eyJ")
        && parts.iter().all(|part| {
            part.len() >= 4
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'=')
        })
}

/// Resource limits a manifest asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Limits {
    /// Linear memory, in MiB.
    pub memory_mib: Option<u64>,
    /// Time one call may run, in seconds.
    pub cpu_seconds: Option<f64>,
}

impl Limits {
    /// Checks that the numbers are usable.
    pub fn check(&self) -> Result<(), String> {
        if self.memory_mib == Some(0) {
            return Err("limits.memory-mib must be at least 1".into());
        }
        if let Some(secs) = self.cpu_seconds
            && !(secs.is_finite() && secs > 0.0)
        {
            return Err("limits.cpu-seconds must be a positive number".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_values_are_recognised() {
        for secret in [
            "postgres://app:hunter2@db.internal:5432/prod",
            "https://user:tok@github.com/org/repo.git",
            "sk-proj-0123456789abcdef",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-123-456-abc",
            "Bearer abc.def",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        ] {
            assert!(secret_in_value(secret).is_some(), "{secret}");
        }
        for plain in [
            "en_US.UTF-8",
            "/usr/local/bin:/usr/bin",
            "https://example.com/path?q=a:b@c",
            "postgres://db.internal:5432/prod",
            "https://user@github.com/org/repo.git",
            "brave",
            "a.b.c",
        ] {
            assert_eq!(secret_in_value(plain), None, "{plain}");
        }
    }

    #[test]
    fn the_value_of_a_host_credential_variable_is_recognised() {
        // SAFETY: the variable is unique to this test.
        unsafe { std::env::set_var("KAIZEN_TEST_VALUE_SECRET_TOKEN", "plain-looking-value") };
        assert!(secret_in_value("plain-looking-value").is_some());
        assert_eq!(secret_in_value("another-plain-value"), None);
    }
}
