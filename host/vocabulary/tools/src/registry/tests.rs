use super::*;
use crate::spec::{Danger, ToolFuture};
use serde_json::json;

/// Echoes its `text` argument, `repeat` times.
struct Echo {
    spec: ToolSpec,
    source: String,
}

impl Echo {
    fn tool(name: &str, source: &str) -> Arc<dyn Tool> {
        Arc::new(Self {
            spec: ToolSpec {
                name: name.to_string(),
                description: "Echoes text".to_string(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "repeat": {"type": "integer", "minimum": 1}
                    },
                    "required": ["text"],
                    "additionalProperties": false
                }),
                danger: Danger::Safe,
                read_only: true,
            },
            source: source.to_string(),
        })
    }
}

impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn source(&self) -> &str {
        &self.source
    }
    fn call<'a>(&'a self, _ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let text = input["text"].as_str().unwrap_or_default();
            let repeat = input["repeat"].as_u64().unwrap_or(1) as usize;
            Ok(ToolOutput::text(text.repeat(repeat)))
        })
    }
}

fn ctx() -> CallContext {
    CallContext {
        session_id: "s".into(),
        call_id: "c".into(),
        workspace: "/w".into(),
        cwd: "/w".into(),
        notes: Default::default(),
        sub_agents: Default::default(),
        completions: Default::default(),
        history: Default::default(),
    }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Echo::tool("Echo", "test")).unwrap();
    registry
}

#[tokio::test]
async fn valid_call_reaches_the_tool() {
    let out = registry()
        .call(&ctx(), "Echo", r#"{"text":"hi","repeat":2}"#)
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "hihi");
}

#[tokio::test]
async fn unknown_tool_lists_the_available_ones_and_suggests_case() {
    let err = registry().call(&ctx(), "echo", "{}").await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
    assert!(
        err.message.contains("Did you mean `Echo`"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("Available tools: Echo."),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn malformed_json_is_reported_with_the_parser_position() {
    let err = registry()
        .call(&ctx(), "Echo", r#"{"text": "unterminated"#)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::InvalidJson);
    assert!(err.message.contains("not valid JSON"), "{}", err.message);
    assert!(err.message.contains("line 1"), "{}", err.message);
}

#[tokio::test]
async fn schema_violations_name_the_failing_paths() {
    let err = registry()
        .call(&ctx(), "Echo", r#"{"text": 5, "repeat": 0, "extra": true}"#)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::SchemaViolation);
    assert!(err.message.contains("`/text`"), "{}", err.message);
    assert!(err.message.contains("`/repeat`"), "{}", err.message);
    assert!(err.message.contains("extra"), "{}", err.message);
}

#[tokio::test]
async fn missing_required_field_is_a_schema_violation() {
    let err = registry().call(&ctx(), "Echo", "").await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::SchemaViolation);
    assert!(err.message.contains("text"), "{}", err.message);
}

#[tokio::test]
async fn oversized_output_is_refused_with_sizes() {
    let mut registry = registry();
    registry.set_max_output_bytes(1024);
    let err = registry
        .call(&ctx(), "Echo", r#"{"text":"x","repeat":2048}"#)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::ResourceLimit);
    assert!(err.message.contains("2.0 KiB"), "{}", err.message);
    assert!(err.message.contains("1.0 KiB"), "{}", err.message);
}

#[test]
fn duplicate_names_name_both_sources() {
    let mut registry = registry();
    let err = registry
        .register(Echo::tool("Echo", "other-plugin"))
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("`test`"), "{message}");
    assert!(message.contains("`other-plugin`"), "{message}");
    assert_eq!(registry.len(), 1);
}

#[test]
fn invalid_names_are_refused() {
    let mut registry = ToolRegistry::new();
    for bad in ["", "has space", "é", &"x".repeat(65)] {
        let err = registry.register(Echo::tool(bad, "p")).unwrap_err();
        assert!(matches!(err, RegistryError::InvalidName { .. }), "{bad}");
    }
}

#[test]
fn invalid_schema_is_refused() {
    let mut registry = ToolRegistry::new();
    let tool = Arc::new(Echo {
        spec: ToolSpec {
            input_schema: json!({"type": "no-such-type"}),
            ..Echo::tool("Bad", "p").spec().clone()
        },
        source: "p".into(),
    });
    let err = registry.register(tool).unwrap_err();
    assert!(matches!(err, RegistryError::InvalidSchema { .. }), "{err}");
}

#[test]
fn human_bytes_picks_units() {
    assert_eq!(human_bytes(10), "10 bytes");
    assert_eq!(human_bytes(1536), "1.5 KiB");
    assert_eq!(human_bytes(50 << 20), "50.0 MiB");
}

#[test]
fn register_all_is_all_or_nothing() {
    let mut registry = registry();
    let err = registry
        .register_all(vec![Echo::tool("Fresh", "p2"), Echo::tool("Echo", "p2")])
        .unwrap_err();
    assert!(matches!(err, RegistryError::Duplicate { .. }), "{err}");
    assert!(registry.get("Fresh").is_none());

    let err = registry
        .register_all(vec![Echo::tool("Twin", "p3"), Echo::tool("Twin", "p3")])
        .unwrap_err();
    assert!(err.to_string().contains("`Twin`"), "{err}");
    assert_eq!(registry.len(), 1);
}

#[tokio::test]
async fn a_subset_keeps_only_the_chosen_tools_and_still_validates() {
    let mut registry = registry();
    registry.register(Echo::tool("Other", "p2")).unwrap();
    registry.set_max_output_bytes(4);
    let subset = registry.subset(|spec| spec.name == "Echo");
    assert_eq!(
        subset.specs().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["Echo"]
    );
    let err = subset.call(&ctx(), "Other", "{}").await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
    assert!(err.message.contains("Available tools: Echo."), "{err}");
    let err = subset.call(&ctx(), "Echo", "{}").await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::SchemaViolation);
    let err = subset
        .call(&ctx(), "Echo", r#"{"text": "12345"}"#)
        .await
        .unwrap_err();
    assert_eq!(
        err.kind,
        ToolErrorKind::ResourceLimit,
        "the output bound carries over"
    );
    assert_eq!(registry.len(), 2, "the original is untouched");
}
