//! Credentials the host adds to plugins' outbound HTTP requests.
//!
//! A plugin must never hold a provider key (the environment filter refuses
//! credential-like names on purpose), yet a tool such as WebSearch needs
//! one to call its API. So the operator names, in their own config, a host,
//! a header and the host environment variable holding the value; the HTTP
//! filter sets that header on requests for exactly that host, replacing
//! any value the plugin set, and only for the plugins the entry names. The
//! value is read when the plugin loads, kept out of `Debug` output and
//! logs, and sent only over https (or plain http to a loopback address
//! whose grant names it with an explicit `http://`, for test servers).

use super::rule::HostPattern;
use http::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One `[[http.credentials]]` entry of the operator's config.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpCredential {
    /// The exact host, `name` or `name:port` (no scheme, no wildcard).
    pub host: String,
    /// The header to set, e.g. `X-Subscription-Token` or `Authorization`.
    pub header: String,
    /// The host's environment variable holding the secret.
    pub env: String,
    /// Text put before the value, e.g. `Bearer `.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
    /// Plugins whose requests get it (when their grant reaches the host);
    /// an entry naming none goes to no plugin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<String>,
}

impl HttpCredential {
    /// Checks the host, header and variable name.
    pub fn check(&self) -> Result<(), String> {
        self.pattern()?;
        HeaderName::from_bytes(self.header.as_bytes())
            .map_err(|_| format!("`{}` is not a valid HTTP header name", self.header))?;
        if self.env.is_empty()
            || !self
                .env
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!(
                "`{}` is not an environment variable name (letters, digits, `_`)",
                self.env
            ));
        }
        HeaderValue::from_str(&self.prefix)
            .map_err(|_| format!("prefix `{}` cannot be part of a header value", self.prefix))?;
        Ok(())
    }

    /// The host as a pattern that names it exactly.
    fn pattern(&self) -> Result<HostPattern, String> {
        if self.host.contains("://") || self.host.contains('*') {
            return Err(format!(
                "credential host `{}` must be one exact host name or address, optionally with \
                 `:port`, without a scheme or wildcard",
                self.host
            ));
        }
        let pattern = HostPattern::parse(&self.host)
            .map_err(|err| format!("credential host `{}`: {err}", self.host))?;
        Ok(pattern)
    }

    /// True when the entry names `plugin` and its `allow` list reaches the
    /// host.
    pub(crate) fn applies(&self, plugin: &str, allow: &[HostPattern]) -> bool {
        if !self.plugins.iter().any(|p| p == plugin) {
            return false;
        }
        let Ok(pattern) = self.pattern() else {
            return false;
        };
        let Some((name, port)) = pattern.exact_host() else {
            return false;
        };
        allow.iter().any(|rule| {
            rule.matches("https", name, port.unwrap_or(443))
                || rule.matches("http", name, port.unwrap_or(80))
        })
    }
}

/// A credential with its secret, ready to add to requests. `Debug` shows
/// where it goes, never the value.
#[derive(Clone)]
pub(crate) struct InjectedHeader {
    pattern: HostPattern,
    name: HeaderName,
    value: HeaderValue,
    env: String,
}

impl fmt::Debug for InjectedHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InjectedHeader")
            .field("host", &self.pattern.to_string())
            .field("header", &self.name)
            .field("env", &self.env)
            .field("value", &"<redacted>")
            .finish()
    }
}

impl InjectedHeader {
    /// Reads the secrets of `credentials` from the host's environment;
    /// those whose variable is unset are left out.
    pub fn resolve(plugin: &str, credentials: &[HttpCredential]) -> Vec<InjectedHeader> {
        credentials
            .iter()
            .filter_map(|cred| {
                let Ok(secret) = std::env::var(&cred.env) else {
                    tracing::debug!(plugin, host = %cred.host, env = %cred.env, "credential variable not set; requests go without it");
                    return None;
                };
                let pattern = cred.pattern().ok()?;
                let name = HeaderName::from_bytes(cred.header.as_bytes()).ok()?;
                let Ok(mut value) = HeaderValue::from_str(&format!("{}{secret}", cred.prefix))
                else {
                    tracing::warn!(plugin, env = %cred.env, "the credential in this variable cannot be sent as a header value; requests go without it");
                    return None;
                };
                value.set_sensitive(true);
                Some(InjectedHeader {
                    pattern,
                    name,
                    value,
                    env: cred.env.clone(),
                })
            })
            .collect()
    }

    /// True when a request to `scheme://host:port` gets this header.
    pub fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        self.pattern.matches(scheme, host, port)
    }

    /// The header's name.
    pub fn name(&self) -> &HeaderName {
        &self.name
    }

    /// The header's value (marked sensitive).
    pub fn value(&self) -> &HeaderValue {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cred(host: &str) -> HttpCredential {
        HttpCredential {
            host: host.into(),
            header: "X-Subscription-Token".into(),
            env: "KAIZEN_TEST_CREDENTIAL_UNIT".into(),
            prefix: String::new(),
            plugins: vec!["websearch".into()],
        }
    }

    fn allow(patterns: &[&str]) -> Vec<HostPattern> {
        patterns
            .iter()
            .map(|p| HostPattern::parse(p).unwrap())
            .collect()
    }

    #[test]
    fn hosts_must_be_exact() {
        assert!(cred("api.search.brave.com").check().is_ok());
        assert!(cred("127.0.0.1:8080").check().is_ok());
        for bad in ["*.brave.com", "https://api.x.com", "api.x.com/path", ""] {
            assert!(cred(bad).check().is_err(), "{bad}");
        }
        let mut bad_header = cred("a.com");
        bad_header.header = "bad header".into();
        assert!(bad_header.check().unwrap_err().contains("header name"));
        let mut bad_env = cred("a.com");
        bad_env.env = "A-B".into();
        assert!(
            bad_env
                .check()
                .unwrap_err()
                .contains("environment variable")
        );
    }

    #[test]
    fn credentials_apply_to_named_plugins_that_reach_the_host() {
        let c = cred("api.search.brave.com");
        assert!(c.applies("websearch", &allow(&["https://api.search.brave.com"])));
        assert!(c.applies("websearch", &allow(&["*"])));
        assert!(!c.applies("websearch", &allow(&["api.tavily.com"])));
        assert!(!c.applies("webfetch", &allow(&["*"])));
        let local = cred("127.0.0.1:8080");
        assert!(local.applies("websearch", &allow(&["http://127.0.0.1:8080"])));
        assert!(!local.applies("websearch", &allow(&["http://127.0.0.1:9090"])));
        let mut unnamed = cred("api.search.brave.com");
        unnamed.plugins.clear();
        assert!(
            !unnamed.applies("websearch", &allow(&["*"])),
            "names no plugin"
        );
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        // SAFETY: the variable is unique to this test.
        unsafe { std::env::set_var("KAIZEN_TEST_CREDENTIAL_UNIT", "s3cr3t-value") };
        let mut c = cred("api.x.com");
        c.prefix = "Bearer ".into();
        let injected = InjectedHeader::resolve("websearch", &[c]);
        assert_eq!(injected.len(), 1);
        assert_eq!(injected[0].value().to_str().unwrap(), "Bearer s3cr3t-value");
        assert!(injected[0].value().is_sensitive());
        let shown = format!("{:?}", injected[0]);
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(injected[0].matches("https", "api.x.com", 443));
        assert!(!injected[0].matches("https", "evil.api.x.com", 443));
    }
}
