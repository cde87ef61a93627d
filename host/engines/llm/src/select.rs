//! Choosing the provider: from `--provider`, or from the model name, with
//! keys and base URLs read from an environment snapshot (the process
//! environment in the CLI, a closure over a map in tests).

use crate::anthropic::{ANTHROPIC_DEFAULT_BASE_URL, AnthropicConfig, AnthropicProvider};
use crate::http::{ApiKey, HttpSettings};
use crate::ollama::{OllamaConfig, OllamaProvider};
use crate::openai::{OPENAI_DEFAULT_BASE_URL, OpenAiConfig, OpenAiProvider};
use crate::types::{LlmError, Provider};
use std::fmt;
use std::str::FromStr;

/// A wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions (and compatible servers).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native chat API.
    Ollama,
}

impl ProviderKind {
    /// The name `--provider` takes.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
        }
    }

    /// The model used when none is given.
    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "gpt-4.1",
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::Ollama => "llama3.2",
        }
    }

    /// The provider a model name implies, and the name to send it:
    /// `claude-*` is Anthropic, `ollama/<model>` is Ollama (prefix
    /// stripped), anything else OpenAI.
    pub fn infer(model: &str) -> (ProviderKind, &str) {
        if let Some(rest) = model.strip_prefix("ollama/") {
            (ProviderKind::Ollama, rest)
        } else if model.starts_with("claude-") {
            (ProviderKind::Anthropic, model)
        } else {
            (ProviderKind::OpenAi, model)
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProviderKind {
    type Err = SelectError;

    fn from_str(name: &str) -> Result<Self, SelectError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            "ollama" => Ok(ProviderKind::Ollama),
            other => Err(SelectError {
                message: format!("unknown provider `{other}`: use openai, anthropic or ollama"),
            }),
        }
    }
}

/// Why no provider could be set up: a usage error, worded for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectError {
    /// What is missing and how to provide it. Never contains a key.
    pub message: String,
}

impl From<LlmError> for SelectError {
    fn from(error: LlmError) -> Self {
        SelectError {
            message: error.message,
        }
    }
}

/// The chosen provider and the model name to put in requests.
pub struct Selection {
    /// The wire format.
    pub kind: ProviderKind,
    /// The model name as the provider knows it (`ollama/` stripped).
    pub model: String,
    /// The provider, ready for calls.
    pub provider: Box<dyn Provider>,
}

impl fmt::Debug for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Selection")
            .field("kind", &self.kind)
            .field("model", &self.model)
            .field("provider", &self.provider.name())
            .finish()
    }
}

/// Reads a variable from the process environment, for [`select_provider`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Picks and builds the provider for `model` (`None`: the first provider
/// the environment configures, with its default model) and `provider`
/// (`--provider`; `None`: inferred from the model name). `env` is read for
/// `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`,
/// `ANTHROPIC_BASE_URL` and `OLLAMA_HOST`; empty values count as unset.
///
/// A key may be left out when the base URL points somewhere other than the
/// vendor's API (a local OpenAI-compatible server usually takes none).
pub fn select_provider(
    model: Option<&str>,
    provider: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    http: &HttpSettings,
) -> Result<Selection, SelectError> {
    let var = |name: &str| {
        env(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let explicit = provider.map(str::parse::<ProviderKind>).transpose()?;
    let model = model.map(str::trim).filter(|m| !m.is_empty());
    let (kind, model) = match (explicit, model) {
        (Some(kind), Some(model)) => (kind, model.strip_prefix("ollama/").unwrap_or(model)),
        (Some(kind), None) => (kind, kind.default_model()),
        (None, Some(model)) => ProviderKind::infer(model),
        (None, None) => {
            let configured = [
                ("OPENAI_API_KEY", ProviderKind::OpenAi),
                ("OPENAI_BASE_URL", ProviderKind::OpenAi),
                ("ANTHROPIC_API_KEY", ProviderKind::Anthropic),
                ("OLLAMA_HOST", ProviderKind::Ollama),
            ]
            .into_iter()
            .find(|(name, _)| var(name).is_some())
            .map(|(_, kind)| kind);
            match configured {
                Some(kind) => (kind, kind.default_model()),
                None => return Err(not_configured("No model provider is configured.")),
            }
        }
    };
    let provider: Box<dyn Provider> = match kind {
        ProviderKind::OpenAi => {
            let base_url = var("OPENAI_BASE_URL");
            let key = var("OPENAI_API_KEY").map(ApiKey::new);
            if key.is_none() && is_vendor(base_url.as_deref(), OPENAI_DEFAULT_BASE_URL) {
                return Err(not_configured(&format!(
                    "Model `{model}` uses the OpenAI API, and OPENAI_API_KEY is not set."
                )));
            }
            let mut config = OpenAiConfig::new(key, base_url);
            config.http = http.clone();
            Box::new(OpenAiProvider::new(config)?)
        }
        ProviderKind::Anthropic => {
            let base_url = var("ANTHROPIC_BASE_URL");
            let key = var("ANTHROPIC_API_KEY").map(ApiKey::new);
            if key.is_none() && is_vendor(base_url.as_deref(), ANTHROPIC_DEFAULT_BASE_URL) {
                return Err(not_configured(&format!(
                    "Model `{model}` uses the Anthropic API, and ANTHROPIC_API_KEY is not set."
                )));
            }
            let mut config = AnthropicConfig::new(key, base_url);
            config.http = http.clone();
            Box::new(AnthropicProvider::new(config)?)
        }
        ProviderKind::Ollama => {
            let mut config = OllamaConfig::new(var("OLLAMA_HOST").as_deref());
            config.http = http.clone();
            Box::new(OllamaProvider::new(config)?)
        }
    };
    Ok(Selection {
        kind,
        model: model.to_string(),
        provider,
    })
}

/// Whether `base_url` (unset: the default) is the vendor's own API, which
/// always wants a key.
fn is_vendor(base_url: Option<&str>, default: &str) -> bool {
    let host = |url: &str| {
        reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
    };
    match base_url {
        None => true,
        Some(url) => host(url) == host(default),
    }
}

fn not_configured(first: &str) -> SelectError {
    SelectError {
        message: format!(
            "{first} Configure a provider in one of three ways:\n  \
             - OPENAI_API_KEY for OpenAI (plus OPENAI_BASE_URL, including /v1, for an OpenAI-compatible server)\n  \
             - ANTHROPIC_API_KEY for Anthropic (claude-* models)\n  \
             - OLLAMA_HOST for an Ollama server (models named ollama/<model>; default http://127.0.0.1:11434)\n\
             or replay a recorded session with --replay FILE."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn select(
        model: Option<&str>,
        provider: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Selection, SelectError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        select_provider(
            model,
            provider,
            &|name| map.get(name).cloned(),
            &HttpSettings::default(),
        )
    }

    #[test]
    fn inference_from_model_names() {
        assert_eq!(
            ProviderKind::infer("claude-sonnet-4-5"),
            (ProviderKind::Anthropic, "claude-sonnet-4-5")
        );
        assert_eq!(
            ProviderKind::infer("ollama/qwen3:8b"),
            (ProviderKind::Ollama, "qwen3:8b")
        );
        assert_eq!(
            ProviderKind::infer("gpt-4o"),
            (ProviderKind::OpenAi, "gpt-4o")
        );
        assert_eq!(
            ProviderKind::infer("llama-3-70b"),
            (ProviderKind::OpenAi, "llama-3-70b")
        );
    }

    #[test]
    fn selects_by_model_and_flag() {
        let chosen = select(
            Some("claude-haiku-4-5"),
            None,
            &[("ANTHROPIC_API_KEY", "k")],
        )
        .expect("anthropic");
        assert_eq!(
            (chosen.kind, chosen.model.as_str()),
            (ProviderKind::Anthropic, "claude-haiku-4-5")
        );
        assert_eq!(chosen.provider.name(), "anthropic");
        let chosen = select(Some("ollama/llama3.2"), None, &[]).expect("ollama needs nothing");
        assert_eq!(
            (chosen.kind, chosen.model.as_str()),
            (ProviderKind::Ollama, "llama3.2")
        );
        let chosen = select(Some("ollama/qwen3"), Some("ollama"), &[]).expect("ollama");
        assert_eq!(chosen.model, "qwen3");
        let chosen = select(
            Some("my-model"),
            Some("Anthropic"),
            &[("ANTHROPIC_API_KEY", "k")],
        )
        .expect("flag wins");
        assert_eq!(chosen.kind, ProviderKind::Anthropic);
        let chosen = select(None, None, &[("ANTHROPIC_API_KEY", "k")]).expect("from env");
        assert_eq!(
            (chosen.kind, chosen.model.as_str()),
            (ProviderKind::Anthropic, "claude-sonnet-4-5")
        );
        let chosen =
            select(None, Some("openai"), &[("OPENAI_API_KEY", "k")]).expect("default model");
        assert_eq!(chosen.model, "gpt-4.1");
        let error = select(Some("x"), Some("gemini"), &[]).expect_err("unknown");
        assert!(error.message.contains("openai, anthropic or ollama"));
    }

    #[test]
    fn missing_keys_explain_all_ways_and_never_leak() {
        let error = select(
            Some("gpt-4o"),
            None,
            &[("ANTHROPIC_API_KEY", "sk-ant-secret")],
        )
        .expect_err("no key");
        for needle in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "OLLAMA_HOST",
            "--replay FILE",
            "gpt-4o",
        ] {
            assert!(
                error.message.contains(needle),
                "{needle} in {}",
                error.message
            );
        }
        assert!(!error.message.contains("secret"));
        let error = select(Some("claude-opus-4"), None, &[("ANTHROPIC_API_KEY", " ")])
            .expect_err("blank key");
        assert!(error.message.contains("ANTHROPIC_API_KEY is not set"));
        let error = select(None, None, &[]).expect_err("nothing");
        assert!(
            error
                .message
                .starts_with("No model provider is configured.")
        );
    }

    #[test]
    fn local_compatible_servers_need_no_key() {
        let chosen = select(
            Some("qwen"),
            None,
            &[("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")],
        )
        .expect("local");
        assert_eq!(chosen.kind, ProviderKind::OpenAi);
        assert!(
            select(
                Some("gpt-4o"),
                None,
                &[("OPENAI_BASE_URL", "https://api.openai.com/v1")]
            )
            .is_err()
        );
        let debug = format!(
            "{:?}",
            select(Some("gpt-4o"), None, &[("OPENAI_API_KEY", "sk-secret")]).expect("openai")
        );
        assert!(!debug.contains("secret"), "{debug}");
    }
}
