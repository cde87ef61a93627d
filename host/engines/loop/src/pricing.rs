//! What model calls cost: the embedder's price table, as one function the
//! loop calls after each model call.

use kaizen_llm::Usage;

/// Prices a model call: USD for `usage` on `model`.
pub type Pricing<'a> = &'a (dyn Fn(&str, &Usage) -> f64 + Send + Sync);
