//! Well-behaved tools, in Rust and in Python, through the registry.

mod common;

use common::{Harness, error, registry_of, text};
use kaizen_tools::ToolErrorKind;
use serde_json::json;

#[tokio::test]
async fn rust_tools_answer_through_the_registry() {
    let h = Harness::new();
    let registry = h.registry(&["hello"]).await;
    let ctx = h.ctx("s1");
    assert_eq!(
        text(registry.call(&ctx, "Greet", r#"{"name":"Ada"}"#).await),
        "Hello, Ada!"
    );
    let sum = registry
        .call(&ctx, "Add", r#"{"a":2,"b":3.5}"#)
        .await
        .unwrap();
    assert_eq!(sum.joined_text(), "5.5");
    assert_eq!(sum.metadata, Some(json!({"sum": 5.5})));

    let greet = registry.get("Greet").unwrap().spec();
    assert!(greet.read_only);
    assert_eq!(greet.input_schema["properties"]["name"]["type"], "string");
}

#[tokio::test]
async fn bad_arguments_never_reach_the_plugin() {
    let h = Harness::new();
    let registry = h.registry(&["hello"]).await;
    let ctx = h.ctx("s1");
    let err = error(registry.call(&ctx, "Greet", r#"{"name": 7}"#).await);
    assert_eq!(err.kind, ToolErrorKind::SchemaViolation);
    assert!(err.message.contains("`/name`"), "{}", err.message);
    let err = error(registry.call(&ctx, "Greet", "{name: Ada}").await);
    assert_eq!(err.kind, ToolErrorKind::InvalidJson);
    let err = error(registry.call(&ctx, "Greeet", "{}").await);
    assert_eq!(err.kind, ToolErrorKind::UnknownTool);
    assert!(err.message.contains("Greet"), "{}", err.message);
}

#[tokio::test]
async fn python_tool_proves_the_contract_is_language_neutral() {
    let h = Harness::new();
    let registry = h.registry(&["py-echo", "hello"]).await;
    let ctx = h.ctx("s1");
    let out = registry
        .call(&ctx, "PyEcho", r#"{"text":"héllo from python"}"#)
        .await
        .unwrap();
    assert_eq!(out.joined_text(), "héllo from python");
    assert_eq!(out.metadata, Some(json!({"length": 17})));
    let err = error(registry.call(&ctx, "PyFail", "{}").await);
    assert_eq!(err.kind, ToolErrorKind::InvalidInput);
    assert_eq!(err.message, "python says no");
    // A Rust tool in the same registry still answers.
    assert_eq!(
        text(registry.call(&ctx, "Greet", r#"{"name":"Py"}"#).await),
        "Hello, Py!"
    );
}

#[tokio::test]
async fn stateful_plugin_keeps_one_instance_per_session() {
    let h = Harness::new();
    let registry = h.registry(&["counter"]).await;
    let (a, b) = (h.ctx("session-a"), h.ctx("session-b"));
    assert_eq!(text(registry.call(&a, "Count", "{}").await), "1");
    assert_eq!(text(registry.call(&a, "Count", "{}").await), "2");
    assert_eq!(text(registry.call(&b, "Count", "{}").await), "1");
    assert_eq!(text(registry.call(&a, "Count", "{}").await), "3");
}

#[tokio::test]
async fn stateless_plugin_gets_a_fresh_instance_per_call() {
    let h = Harness::new();
    let dir = h.custom_plugin(
        "counter-fresh",
        "counter",
        &common::manifest("counter-fresh", ""),
    );
    let plugin = h.load_dir(&dir).await.unwrap();
    let registry = registry_of(&plugin);
    let ctx = h.ctx("s");
    assert_eq!(text(registry.call(&ctx, "Count", "{}").await), "1");
    assert_eq!(text(registry.call(&ctx, "Count", "{}").await), "1");
}
