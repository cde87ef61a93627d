//! The `[context]` table: when a run compacts its conversation to stay
//! within the model's context window, and the windows of models the
//! built-in table does not know (or knows otherwise).
//!
//! ```toml
//! [context]
//! threshold = 0.8        # compact when the next request would pass 80 % of the window
//! keep-recent = 0.3      # the recent turns kept verbatim fill at most 30 %
//! elide-over = 4096      # older tool results longer than this (bytes) are elided first
//! compact = true         # false: never compact (a long run ends in the provider's error)
//!
//! [context.windows]
//! "my-local-model" = 32768
//! ```

use crate::section::{Scope, Section};
use kaizen_llm::ContextWindows;
use kaizen_loop::{ContextPolicy, DEFAULT_ELIDE_OVER, DEFAULT_KEEP_RECENT, DEFAULT_THRESHOLD};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The `[context]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ContextSection {
    /// The fraction of the window at which a model call compacts first.
    pub threshold: Option<f64>,
    /// The fraction of the window the recent turns kept verbatim may fill.
    pub keep_recent: Option<f64>,
    /// Older tool results longer than this many bytes are elided first.
    pub elide_over: Option<usize>,
    /// Whether runs compact at all.
    pub compact: Option<bool>,
    /// Context windows in tokens, by model-name prefix.
    #[serde(default)]
    pub windows: BTreeMap<String, u64>,
}

impl Section for ContextSection {
    const KEY: &'static str = "[context]";
    const SCOPE: Scope = Scope::Trusted;

    fn is_set(&self) -> bool {
        self.threshold.is_some()
            || self.keep_recent.is_some()
            || self.elide_over.is_some()
            || self.compact.is_some()
            || !self.windows.is_empty()
    }

    fn merge(&mut self, over: Self) {
        self.threshold = over.threshold.or(self.threshold);
        self.keep_recent = over.keep_recent.or(self.keep_recent);
        self.elide_over = over.elide_over.or(self.elide_over);
        self.compact = over.compact.or(self.compact);
        self.windows.extend(over.windows);
    }

    fn check(&self, file: &Path) -> anyhow::Result<()> {
        let file = file.display();
        let threshold = self.threshold.unwrap_or(DEFAULT_THRESHOLD);
        if !(threshold > 0.0 && threshold <= 1.0) {
            anyhow::bail!(
                "{file}: [context] threshold = {threshold}: use a fraction above 0 and at most 1 (0.8 is 80 % of the window)"
            );
        }
        let keep = self.keep_recent.unwrap_or(DEFAULT_KEEP_RECENT);
        if !(keep > 0.0 && keep < threshold) {
            anyhow::bail!(
                "{file}: [context] keep-recent = {keep}: use a fraction above 0 and below the threshold ({threshold})"
            );
        }
        if self.elide_over.is_some_and(|bytes| bytes < 256) {
            anyhow::bail!("{file}: [context] elide-over: use 256 bytes or more");
        }
        if let Some((model, _)) = self.windows.iter().find(|(_, tokens)| **tokens < 1_000) {
            anyhow::bail!(
                "{file}: [context.windows] \"{model}\": a window holds 1000 tokens or more"
            );
        }
        Ok(())
    }
}

impl ContextSection {
    /// The policy for runs on `model`.
    pub fn policy(&self, model: &str) -> ContextPolicy {
        let windows = self
            .windows
            .iter()
            .fold(ContextWindows::default(), |windows, (prefix, tokens)| {
                windows.with_override(prefix.clone(), *tokens)
            });
        ContextPolicy {
            window: match self.compact {
                Some(false) => 0,
                _ => windows.window(model),
            },
            threshold: self.threshold.unwrap_or(DEFAULT_THRESHOLD),
            keep_recent: self.keep_recent.unwrap_or(DEFAULT_KEEP_RECENT),
            elide_over: self.elide_over.unwrap_or(DEFAULT_ELIDE_OVER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_settings_make_the_policy() {
        let section: ContextSection =
            toml::from_str("threshold = 0.5\n[windows]\n\"gpt-4o-mini\" = 4000\n").unwrap();
        section.check(Path::new("c.toml")).unwrap();
        let policy = section.policy("gpt-4o-mini-2024-07-18");
        assert_eq!((policy.window, policy.limit()), (4000, 2000));
        assert_eq!(policy.keep_recent, DEFAULT_KEEP_RECENT);
        assert_eq!(section.policy("gpt-4o").window, 128_000);
        let off: ContextSection = toml::from_str("compact = false").unwrap();
        assert_eq!(off.policy("gpt-4o").window, 0);
    }

    #[test]
    fn bad_values_name_the_file_and_the_fix() {
        for (text, said) in [
            ("threshold = 1.5", "threshold = 1.5"),
            ("keep-recent = 0.9", "below the threshold"),
            ("elide-over = 10", "256 bytes or more"),
            ("[windows]\nx = 10", "\"x\""),
        ] {
            let section: ContextSection = toml::from_str(text).unwrap();
            let err = section.check(Path::new("c.toml")).unwrap_err().to_string();
            assert!(err.contains("c.toml") && err.contains(said), "{err}");
        }
    }
}
