//! Shared helpers: providers pointed at a scripted model server, fast retry
//! settings, and an event collector.

#![allow(dead_code)] // each test file uses a different subset

use kaizen_llm::{
    AnthropicConfig, AnthropicProvider, ApiKey, Block, HttpSettings, Message, OllamaConfig,
    OllamaProvider, OpenAiConfig, OpenAiProvider, Provider, Request, RetryPolicy, Role,
    StreamEvent, ToolDefinition,
};
use kaizen_model_server::ModelServer;
use std::sync::Mutex;
use std::time::Duration;

/// The three wire formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

pub const ALL: [Wire; 3] = [Wire::OpenAi, Wire::Anthropic, Wire::Ollama];

impl Wire {
    /// The variable an auth error must name.
    pub fn key_var(self) -> &'static str {
        match self {
            Wire::OpenAi => "OPENAI_API_KEY",
            Wire::Anthropic => "ANTHROPIC_API_KEY",
            Wire::Ollama => "OLLAMA_HOST",
        }
    }

    pub fn model(self) -> &'static str {
        match self {
            Wire::OpenAi => "gpt-4o",
            Wire::Anthropic => "claude-sonnet-4-5",
            Wire::Ollama => "llama3.2",
        }
    }
}

/// Short timeouts and near-zero backoff, so retry tests take milliseconds
/// (except where a `retry-after` is honoured).
pub fn fast() -> HttpSettings {
    HttpSettings {
        first_byte_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_retry_after: Duration::from_secs(60),
        },
    }
}

pub const OPENAI_KEY: &str = "sk-test-openai-0123";
pub const ANTHROPIC_KEY: &str = "sk-ant-test-4567";

/// A provider of `wire` talking to `server`.
pub fn provider(wire: Wire, server: &ModelServer, http: HttpSettings) -> Box<dyn Provider> {
    match wire {
        Wire::OpenAi => {
            let mut config = OpenAiConfig::new(
                Some(ApiKey::new(OPENAI_KEY)),
                Some(server.openai_base_url()),
            );
            config.http = http;
            Box::new(OpenAiProvider::new(config).expect("openai"))
        }
        Wire::Anthropic => {
            let mut config = AnthropicConfig::new(
                Some(ApiKey::new(ANTHROPIC_KEY)),
                Some(server.anthropic_base_url()),
            );
            config.http = http;
            Box::new(AnthropicProvider::new(config).expect("anthropic"))
        }
        Wire::Ollama => {
            let mut config = OllamaConfig::new(Some(&server.ollama_host()));
            config.http = http;
            Box::new(OllamaProvider::new(config).expect("ollama"))
        }
    }
}

/// A request with a system prompt, one user message and two tools.
pub fn request(wire: Wire) -> Request {
    let tool = |name: &str| ToolDefinition {
        name: name.into(),
        description: format!("The {name} tool."),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        }),
    };
    Request {
        model: wire.model().into(),
        system: "You are a test.".into(),
        messages: vec![Message {
            role: Role::User,
            content: vec![Block::Text {
                text: "Read a.txt".into(),
            }],
        }],
        tools: vec![tool("Read"), tool("Glob")],
        max_tokens: 512,
        temperature: None,
    }
}

/// Collects the events of a call.
#[derive(Default)]
pub struct Events(Mutex<Vec<StreamEvent>>);

impl Events {
    pub fn sink(&self) -> impl Fn(StreamEvent) + Send + Sync + '_ {
        |event| self.0.lock().expect("lock").push(event)
    }

    pub fn all(&self) -> Vec<StreamEvent> {
        self.0.lock().expect("lock").clone()
    }

    pub fn text(&self) -> String {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    pub fn retries(&self) -> Vec<u32> {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying { attempt, .. } => Some(attempt),
                _ => None,
            })
            .collect()
    }
}
