//! What a runtime can do, for `kaizen runtimes` and the selector.

use serde::Serialize;

/// How a runtime's cost reaches the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostReporting {
    /// The runtime reports what it spent.
    Reported,
    /// It reports tokens only; the cost is computed from Kaizen's price
    /// table and marked as estimated.
    Estimated,
}

/// The model vendors whose APIs a runtime speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vendor {
    /// Anthropic's Messages API (Claude models).
    Anthropic,
    /// OpenAI's APIs (GPT and o-series models).
    Openai,
    /// Google's Gemini API.
    Gemini,
    /// A local Ollama server.
    Ollama,
}

impl Vendor {
    /// The vendor whose models are named like `model`, if any is known.
    pub fn of_model(model: &str) -> Option<Vendor> {
        let bare = model.rsplit_once('/').map_or(model, |(_, bare)| bare);
        if model.starts_with("ollama/") {
            Some(Vendor::Ollama)
        } else if bare.starts_with("claude") {
            Some(Vendor::Anthropic)
        } else if bare.starts_with("gemini") {
            Some(Vendor::Gemini)
        } else if bare.starts_with("gpt")
            || bare.starts_with("codex")
            || ["o1", "o3", "o4"].iter().any(|o| bare.starts_with(o))
        {
            Some(Vendor::Openai)
        } else {
            None
        }
    }
}

/// What a runtime can do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeCapabilities {
    /// The vendors whose models it can use.
    pub vendors: Vec<Vendor>,
    /// The model it uses when none is named.
    pub default_model: String,
    /// Its built-in tools.
    pub tools: Vec<String>,
    /// How it confines the commands it runs.
    pub sandbox: Vec<String>,
    /// Whether it connects to MCP servers.
    pub mcp: bool,
    /// Whether its events arrive while it works.
    pub streaming: bool,
    /// How its cost is known.
    pub cost: CostReporting,
    /// Whether a session can be continued.
    pub resume: bool,
    /// The largest context it works with, in tokens.
    pub max_context_tokens: u64,
}

impl RuntimeCapabilities {
    /// Whether it can use `model`: a model of a vendor it speaks, or any
    /// model when the vendor cannot be told from the name.
    pub fn serves(&self, model: &str) -> bool {
        Vendor::of_model(model).is_none_or(|vendor| self.vendors.contains(&vendor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendors_are_told_from_model_names() {
        assert_eq!(
            Vendor::of_model("claude-sonnet-4-5"),
            Some(Vendor::Anthropic)
        );
        assert_eq!(Vendor::of_model("gpt-5"), Some(Vendor::Openai));
        assert_eq!(Vendor::of_model("o4-mini"), Some(Vendor::Openai));
        assert_eq!(Vendor::of_model("openai/gpt-4o"), Some(Vendor::Openai));
        assert_eq!(Vendor::of_model("gemini-2.5-flash"), Some(Vendor::Gemini));
        assert_eq!(Vendor::of_model("ollama/llama3"), Some(Vendor::Ollama));
        assert_eq!(Vendor::of_model("my-finetune"), None);
    }
}
