//! What each provider sends: headers, paths and request bodies, including a
//! conversation with tool calls and results.

mod common;

use common::{ANTHROPIC_KEY, Events, OPENAI_KEY, Wire, fast, provider, request};
use kaizen_llm::{Block, Message, ProviderKind, Request, Role, select_provider};
use kaizen_model_server::{ModelServer, Reply, Script};
use serde_json::{Value, json};
use std::collections::HashMap;

async fn one_call(wire: Wire, request: &Request) -> kaizen_model_server::Recorded {
    let server = ModelServer::start(Script::new().reply(Reply::text("ok")))
        .await
        .expect("server");
    provider(wire, &server, fast())
        .complete(request, &Events::default().sink())
        .await
        .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
    server.requests().remove(0)
}

/// A conversation with a tool round: text, a call with malformed arguments,
/// a good call, their results (one an error with an image).
fn conversation(wire: Wire) -> Request {
    let mut request = request(wire);
    request.messages.push(Message {
        role: Role::Assistant,
        content: vec![
            Block::Text {
                text: "Reading.".into(),
            },
            Block::ToolUse {
                id: "call_a".into(),
                name: "Read".into(),
                arguments: r#"{"path": "a.txt""#.into(),
            },
            Block::ToolUse {
                id: "call_b".into(),
                name: "Glob".into(),
                arguments: r#"{"path":"*.rs"}"#.into(),
            },
        ],
    });
    request.messages.push(Message {
        role: Role::User,
        content: vec![
            Block::ToolResult {
                tool_use_id: "call_a".into(),
                content: vec![Block::Text {
                    text: "Invalid JSON arguments".into(),
                }],
                is_error: true,
            },
            Block::ToolResult {
                tool_use_id: "call_b".into(),
                content: vec![
                    Block::Text {
                        text: "main.rs".into(),
                    },
                    Block::Image {
                        media_type: "image/png".into(),
                        data_base64: "iVBORw0K".into(),
                    },
                ],
                is_error: false,
            },
        ],
    });
    request
}

#[tokio::test]
async fn openai_headers_and_body() {
    let sent = one_call(Wire::OpenAi, &conversation(Wire::OpenAi)).await;
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    let body = &sent.body;
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 512);
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(tools, vec!["Read", "Glob"]);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "tool", "user"]
    );
    assert_eq!(messages[0]["content"], "You are a test.");
    assert_eq!(messages[2]["content"], "Reading.");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"], r#"{"path": "a.txt""#,
        "malformed arguments go back verbatim"
    );
    assert_eq!(messages[2]["tool_calls"][1]["id"], "call_b");
    assert_eq!(messages[3]["tool_call_id"], "call_a");
    assert_eq!(messages[3]["content"], "Invalid JSON arguments");
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    assert!(
        messages[4]["content"]
            .as_str()
            .expect("text")
            .starts_with("main.rs")
    );
    assert_eq!(
        messages[5]["content"][0]["image_url"]["url"],
        "data:image/png;base64,iVBORw0K"
    );
}

#[tokio::test]
async fn anthropic_headers_and_body() {
    let sent = one_call(Wire::Anthropic, &conversation(Wire::Anthropic)).await;
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(
        sent.headers.get("x-api-key").map(String::as_str),
        Some(ANTHROPIC_KEY)
    );
    assert_eq!(
        sent.headers.get("anthropic-version").map(String::as_str),
        Some("2023-06-01")
    );
    assert!(!sent.headers.contains_key("authorization"));
    let body = &sent.body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}])
    );
    let tools = body["tools"].as_array().expect("tools");
    assert_eq!(tools[0]["name"], "Read");
    assert_eq!(tools[0]["input_schema"]["required"], json!(["path"]));
    assert!(tools[0].get("cache_control").is_none());
    assert_eq!(tools[1]["cache_control"], json!({"type": "ephemeral"}));
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, vec!["user", "assistant", "user"]);
    let assistant = messages[1]["content"].as_array().expect("content");
    assert_eq!(assistant[0], json!({"type": "text", "text": "Reading."}));
    assert_eq!(assistant[1]["type"], "tool_use");
    assert_eq!(
        assistant[1]["input"],
        json!({}),
        "malformed arguments become {{}}"
    );
    assert_eq!(assistant[2]["input"], json!({"path": "*.rs"}));
    let results = messages[2]["content"].as_array().expect("content");
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "call_a");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[1]["content"][1]["type"], "image");
    assert_eq!(results[1]["content"][1]["source"]["data"], "iVBORw0K");
    assert_eq!(results[1]["cache_control"], json!({"type": "ephemeral"}));
}

#[tokio::test]
async fn ollama_headers_and_body() {
    let sent = one_call(Wire::Ollama, &conversation(Wire::Ollama)).await;
    assert_eq!(sent.path, "/api/chat");
    assert!(!sent.headers.contains_key("authorization"));
    let body = &sent.body;
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(body["stream"], true);
    assert_eq!(body["options"]["num_predict"], 512);
    assert_eq!(body["tools"][1]["function"]["name"], "Glob");
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "tool", "user"]
    );
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        json!({})
    );
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["arguments"],
        json!({"path": "*.rs"})
    );
    assert_eq!(messages[3]["tool_name"], "Read");
    assert_eq!(messages[4]["tool_name"], "Glob");
    assert_eq!(messages[5]["images"], json!(["iVBORw0K"]));
}

#[tokio::test]
async fn selection_from_an_environment_snapshot_reaches_the_server() {
    let server = ModelServer::start(
        Script::new()
            .reply(Reply::text("from openai"))
            .reply(Reply::text("from anthropic"))
            .reply(Reply::text("from ollama")),
    )
    .await
    .expect("server");
    let host_without_scheme = server.ollama_host().replace("http://", "");
    let env: HashMap<&str, String> = HashMap::from([
        ("OPENAI_API_KEY", OPENAI_KEY.to_string()),
        ("OPENAI_BASE_URL", server.openai_base_url()),
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.to_string()),
        ("ANTHROPIC_BASE_URL", server.anthropic_base_url()),
        ("OLLAMA_HOST", host_without_scheme),
    ]);
    let lookup = |name: &str| env.get(name).cloned();
    for (model, kind, expected) in [
        ("gpt-4.1-mini", ProviderKind::OpenAi, "from openai"),
        (
            "claude-haiku-4-5",
            ProviderKind::Anthropic,
            "from anthropic",
        ),
        ("ollama/qwen3", ProviderKind::Ollama, "from ollama"),
    ] {
        let chosen = select_provider(Some(model), None, &lookup, &fast()).expect("selected");
        assert_eq!(chosen.kind, kind);
        let mut req = request(Wire::OpenAi);
        req.model = chosen.model.clone();
        let response = chosen
            .provider
            .complete(&req, &Events::default().sink())
            .await
            .expect("answered");
        assert_eq!(response.text(), expected);
    }
    let sent: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(sent[2]["model"], "qwen3", "the ollama/ prefix is stripped");
}
