//! How many tokens each model's context window holds: the price table's
//! neighbour, matched the same way (longest model-name prefix), built in
//! and overridable from config.

use crate::prefix::PrefixTable;

/// The window assumed for a model the table does not know.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// Model-name prefixes and their context windows in tokens (published
/// figures, 2025).
fn builtin() -> Vec<(&'static str, u64)> {
    vec![
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1", 1_047_576),
        ("o1", 200_000),
        ("o1-mini", 128_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gpt-5", 400_000),
        ("claude-opus-4", 200_000),
        ("claude-sonnet-4", 200_000),
        ("claude-3-7-sonnet", 200_000),
        ("claude-3-5-sonnet", 200_000),
        ("claude-3-5-haiku", 200_000),
        ("claude-haiku-4-5", 200_000),
    ]
}

/// Context windows by model-name prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextWindows {
    windows: PrefixTable<u64>,
}

impl Default for ContextWindows {
    /// The built-in windows.
    fn default() -> Self {
        ContextWindows {
            windows: PrefixTable::new(builtin()),
        }
    }
}

impl ContextWindows {
    /// Sets the window of a model-name prefix (from config), replacing any.
    pub fn with_override(mut self, model: impl Into<String>, tokens: u64) -> Self {
        self.windows.insert(model.into(), tokens);
        self
    }

    /// The window of `model`, if the table knows it.
    pub fn known(&self, model: &str) -> Option<u64> {
        self.windows.get(model)
    }

    /// The window of `model`, or [`DEFAULT_WINDOW`].
    pub fn window(&self, model: &str) -> u64 {
        self.known(model).unwrap_or(DEFAULT_WINDOW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_by_prefix_and_overrides() {
        let windows = ContextWindows::default();
        assert_eq!(windows.window("gpt-4o-mini-2024-07-18"), 128_000);
        assert_eq!(windows.window("gpt-4.1-nano"), 1_047_576);
        assert_eq!(windows.window("openai/gpt-5-mini"), 400_000);
        assert_eq!(windows.window("claude-sonnet-4-5-20250929"), 200_000);
        assert_eq!(windows.known("mystery"), None);
        assert_eq!(windows.window("mystery"), DEFAULT_WINDOW);
        let small = windows.with_override("gpt-4o-mini", 3_000);
        assert_eq!(small.window("gpt-4o-mini"), 3_000);
        assert_eq!(small.window("gpt-4o"), 128_000);
    }
}
