//! Tables keyed by model-name prefix: the longest key that prefixes a name
//! wins, so dated names (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`)
//! find their model, and a provider prefix such as `openai/` is ignored.

use std::collections::BTreeMap;

/// Values by model-name prefix.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrefixTable<T> {
    entries: BTreeMap<String, T>,
}

impl<T: Copy> PrefixTable<T> {
    /// A table of `entries`.
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a str, T)>) -> Self {
        PrefixTable {
            entries: entries
                .into_iter()
                .map(|(key, value)| (key.to_string(), value))
                .collect(),
        }
    }

    /// Sets the value of a prefix, replacing any.
    pub fn insert(&mut self, prefix: String, value: T) {
        self.entries.insert(prefix, value);
    }

    /// The value of the longest prefix of `model`, if any.
    pub fn get(&self, model: &str) -> Option<T> {
        let lookup = |name: &str| {
            self.entries
                .iter()
                .filter(|(key, _)| name.starts_with(key.as_str()))
                .max_by_key(|(key, _)| key.len())
                .map(|(_, value)| *value)
        };
        lookup(model).or_else(|| model.split_once('/').and_then(|(_, rest)| lookup(rest)))
    }
}
