//! What calls cost: a table of USD prices per million tokens, matched by the
//! longest model-name prefix so dated names (`gpt-4o-2024-08-06`,
//! `claude-sonnet-4-20250514`) find their model.

use crate::prefix::PrefixTable;
use crate::types::Usage;
use serde::{Deserialize, Serialize};

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Input tokens at the full rate.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cached_input: f64,
    /// Input tokens written to the prompt cache (Anthropic bills 1.25× the
    /// input rate; OpenAI does not report writes). Defaults to `input`.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// A price without a cache-write surcharge.
    pub const fn new(input: f64, output: f64, cached_input: f64) -> Self {
        Price {
            input,
            output,
            cached_input,
            cache_write: None,
        }
    }

    /// An Anthropic price: cache reads at 0.1×, writes (5-minute TTL) at
    /// 1.25× the input rate.
    pub fn anthropic(input: f64, output: f64) -> Self {
        Price {
            input,
            output,
            cached_input: input * 0.1,
            cache_write: Some(input * 1.25),
        }
    }

    /// The USD cost of `usage` at this price.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per_token = |count: u64, rate: f64| count as f64 * rate / 1_000_000.0;
        per_token(usage.input_tokens, self.input)
            + per_token(usage.output_tokens, self.output)
            + per_token(usage.cache_read_tokens, self.cached_input)
            + per_token(
                usage.cache_write_tokens,
                self.cache_write.unwrap_or(self.input),
            )
    }
}

/// Model-name prefixes and their prices (published list prices, 2025).
fn builtin() -> Vec<(&'static str, Price)> {
    vec![
        ("gpt-4o", Price::new(2.50, 10.00, 1.25)),
        ("gpt-4o-mini", Price::new(0.15, 0.60, 0.075)),
        ("gpt-4.1", Price::new(2.00, 8.00, 0.50)),
        ("gpt-4.1-mini", Price::new(0.40, 1.60, 0.10)),
        ("gpt-4.1-nano", Price::new(0.10, 0.40, 0.025)),
        ("o1", Price::new(15.00, 60.00, 7.50)),
        ("o1-mini", Price::new(1.10, 4.40, 0.55)),
        ("o3", Price::new(2.00, 8.00, 0.50)),
        ("o3-mini", Price::new(1.10, 4.40, 0.55)),
        // No cache discount on the pro models.
        ("o3-pro", Price::new(20.00, 80.00, 20.00)),
        ("o4-mini", Price::new(1.10, 4.40, 0.275)),
        ("gpt-5", Price::new(1.25, 10.00, 0.125)),
        ("gpt-5-mini", Price::new(0.25, 2.00, 0.025)),
        ("gpt-5-nano", Price::new(0.05, 0.40, 0.005)),
        ("gpt-5-pro", Price::new(15.00, 120.00, 15.00)),
        ("claude-opus-4", Price::anthropic(15.00, 75.00)),
        ("claude-opus-4-5", Price::anthropic(5.00, 25.00)),
        ("claude-sonnet-4", Price::anthropic(3.00, 15.00)),
        ("claude-sonnet-4-5", Price::anthropic(3.00, 15.00)),
        ("claude-3-7-sonnet", Price::anthropic(3.00, 15.00)),
        ("claude-3-5-sonnet", Price::anthropic(3.00, 15.00)),
        ("claude-3-5-haiku", Price::anthropic(0.80, 4.00)),
        ("claude-haiku-4-5", Price::anthropic(1.00, 5.00)),
        // Gemini's prices for prompts up to 200k tokens (Gemini CLI
        // reports no cost; Kaizen estimates it from these).
        ("gemini-2.5-pro", Price::new(1.25, 10.00, 0.31)),
        ("gemini-2.5-flash", Price::new(0.30, 2.50, 0.075)),
        ("gemini-2.5-flash-lite", Price::new(0.10, 0.40, 0.025)),
    ]
}

/// Prices by model-name prefix, built in and overridable.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    prices: PrefixTable<Price>,
}

impl Default for PriceTable {
    /// The built-in prices.
    fn default() -> Self {
        PriceTable {
            prices: PrefixTable::new(builtin()),
        }
    }
}

impl PriceTable {
    /// A table without any price.
    pub fn empty() -> Self {
        PriceTable {
            prices: PrefixTable::new([]),
        }
    }

    /// Sets the price of a model name prefix (from config), replacing any.
    pub fn with_override(mut self, model: impl Into<String>, price: Price) -> Self {
        self.prices.insert(model.into(), price);
        self
    }

    /// The price of `model`: the entry with the longest key that prefixes
    /// it. A provider prefix such as `openai/` is ignored. `None` when the
    /// model is unknown.
    pub fn price(&self, model: &str) -> Option<Price> {
        self.prices.get(model)
    }

    /// The USD cost of `usage` on `model`. Local Ollama models
    /// (`ollama/...`) are free: `Some(0.0)`. `None` for an unknown model, so
    /// the caller can count it as 0 and warn once.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        if model.starts_with("ollama/") {
            return Some(0.0);
        }
        self.price(model).map(|price| price.cost(usage))
    }

    /// Like [`PriceTable::cost`], knowing the provider that served the call
    /// (its [`crate::Provider::name`]): everything Ollama serves is free.
    pub fn cost_for(&self, provider: &str, model: &str, usage: &Usage) -> Option<f64> {
        if provider == "ollama" {
            return Some(0.0);
        }
        self.cost(model, usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn longest_prefix_wins() {
        let table = PriceTable::default();
        assert_eq!(
            table.price("gpt-4o-mini-2024-07-18"),
            Some(Price::new(0.15, 0.60, 0.075))
        );
        assert_eq!(
            table.price("gpt-4o-2024-08-06"),
            Some(Price::new(2.50, 10.00, 1.25))
        );
        assert_eq!(
            table.price("gpt-4.1-nano"),
            Some(Price::new(0.10, 0.40, 0.025))
        );
        assert_eq!(
            table.price("claude-opus-4-5-20251101").map(|p| p.input),
            Some(5.0)
        );
        assert_eq!(
            table.price("claude-opus-4-1-20250805").map(|p| p.input),
            Some(15.0)
        );
        assert_eq!(
            table.price("claude-sonnet-4-20250514").map(|p| p.output),
            Some(15.0)
        );
        assert_eq!(
            table.price("openai/gpt-5-mini").map(|p| p.input),
            Some(0.25)
        );
        assert_eq!(table.price("mystery-model"), None);
    }

    #[test]
    fn costs() {
        let table = PriceTable::default();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 1_000_000,
        };
        // 3 + 1.5 + 0.6 + 3.75
        assert!(close(
            table.cost("claude-sonnet-4-5", &usage).expect("known"),
            8.85
        ));
        // 2.5 + 1 + 2.5 + 2.5 (writes at the input rate)
        assert!(close(table.cost("gpt-4o", &usage).expect("known"), 8.5));
        assert_eq!(table.cost("ollama/llama3.2", &usage), Some(0.0));
        assert_eq!(table.cost_for("ollama", "llama3.2", &usage), Some(0.0));
        assert_eq!(table.cost("llama3.2", &usage), None);
    }

    #[test]
    fn overrides() {
        let table = PriceTable::default()
            .with_override("gpt-4o", Price::new(1.0, 1.0, 1.0))
            .with_override("my-model", Price::new(0.0, 0.0, 0.0));
        assert_eq!(table.price("gpt-4o-2024").map(|p| p.input), Some(1.0));
        assert_eq!(table.price("gpt-4o-mini").map(|p| p.input), Some(0.15));
        assert_eq!(table.cost("my-model-7b", &Usage::default()), Some(0.0));
        assert_eq!(PriceTable::empty().price("gpt-4o"), None);
    }
}
