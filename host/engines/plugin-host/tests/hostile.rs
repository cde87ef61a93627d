//! Hostile guests: each is contained with an error a user would want, and
//! the host serves the next call.

mod common;

use common::{Harness, error, manifest, registry_of, text};
use kaizen_plugin_host::Capabilities;
use kaizen_tools::{ToolErrorKind, ToolRegistry};

/// The hostile plugin with tight limits so the tests stay quick.
async fn hostile(h: &Harness) -> ToolRegistry {
    let dir = h.custom_plugin(
        "hostile",
        "hostile",
        &manifest("hostile", "[limits]\nmemory-mib = 64\ncpu-seconds = 0.5"),
    );
    registry_of(&h.load_dir(&dir).await.unwrap())
}

async fn still_serves(registry: &ToolRegistry, h: &Harness) {
    assert_eq!(
        text(registry.call(&h.ctx("s"), "Ok", "{}").await),
        "still alive"
    );
}

#[tokio::test]
async fn infinite_loop_hits_the_time_limit() {
    let h = Harness::new();
    let registry = hostile(&h).await;
    let err = error(registry.call(&h.ctx("s"), "Spin", "{}").await);
    assert_eq!(err.kind, ToolErrorKind::ResourceLimit);
    assert!(
        err.message.contains("time limit of 500 ms"),
        "{}",
        err.message
    );
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn memory_bomb_hits_the_memory_limit() {
    let h = Harness::new();
    let registry = hostile(&h).await;
    let err = error(registry.call(&h.ctx("s"), "MemoryBomb", "{}").await);
    assert_eq!(err.kind, ToolErrorKind::ResourceLimit);
    assert!(err.message.contains("limit of 64 MiB"), "{}", err.message);
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn deep_recursion_overflows_cleanly() {
    let h = Harness::new();
    let registry = hostile(&h).await;
    let err = error(
        registry
            .call(&h.ctx("s"), "Recurse", r#"{"depth": 100000000}"#)
            .await,
    );
    assert_eq!(err.kind, ToolErrorKind::Crashed);
    // Rust keeps large frames on a stack in linear memory, so overflowing
    // it is an out-of-bounds access rather than a wasm stack overflow.
    assert!(
        err.message.contains("call stack") || err.message.contains("stack overflow"),
        "{}",
        err.message
    );
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn panic_is_reported_with_the_plugins_message() {
    let h = Harness::new();
    let registry = hostile(&h).await;
    let err = error(registry.call(&h.ctx("s"), "Panic", "{}").await);
    assert_eq!(err.kind, ToolErrorKind::Crashed);
    assert!(
        err.message.contains("boom from the hostile plugin"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("next call starts a fresh one"),
        "{}",
        err.message
    );
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn invalid_json_metadata_is_refused() {
    let h = Harness::new();
    let registry = hostile(&h).await;
    let err = error(registry.call(&h.ctx("s"), "BadMetadata", "{}").await);
    assert_eq!(err.kind, ToolErrorKind::Crashed);
    assert!(err.message.contains("not valid JSON"), "{}", err.message);
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn fifty_megabytes_of_output_is_refused() {
    let h = Harness::new();
    let dir = h.custom_plugin("hostile", "hostile", &manifest("hostile", ""));
    let plugin = h.load_dir(&dir).await.unwrap();
    let registry = registry_of(&plugin);
    let err = error(
        registry
            .call(&h.ctx("s"), "HugeOutput", r#"{"mib": 50}"#)
            .await,
    );
    assert_eq!(err.kind, ToolErrorKind::ResourceLimit);
    assert!(err.message.contains("50.0 MiB"), "{}", err.message);
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn a_trap_in_a_stateful_instance_is_replaced() {
    let h = Harness::new();
    // Lines after `component` stay in the [plugin] table.
    let dir = h.custom_plugin(
        "hostile",
        "hostile",
        &manifest("hostile", "stateful = true"),
    );
    let plugin = h.load_dir(&dir).await.unwrap();
    assert!(plugin.manifest.plugin.stateful);
    let registry = registry_of(&plugin);
    error(registry.call(&h.ctx("s"), "Panic", "{}").await);
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn raw_sockets_are_denied_even_to_loopback() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = tokio::spawn(async move {
        tokio::time::timeout(std::time::Duration::from_secs(2), listener.accept())
            .await
            .is_ok()
    });
    let h = Harness::new();
    // Not a test of the CPU limit: the tight one can run out on a loaded
    // machine before the refused connect returns.
    let dir = h.custom_plugin(
        "hostile",
        "hostile",
        &manifest("hostile", "[limits]\nmemory-mib = 64\ncpu-seconds = 10"),
    );
    let registry = registry_of(&h.load_dir(&dir).await.unwrap());
    let args = serde_json::json!({ "addr": addr.to_string() }).to_string();
    let err = error(registry.call(&h.ctx("s"), "Connect", &args).await);
    assert!(err.message.contains("connect 127.0.0.1"), "{}", err.message);
    assert!(
        !accepted.await.unwrap(),
        "the guest reached the loopback server"
    );
    still_serves(&registry, &h).await;
}

#[tokio::test]
async fn a_fan_out_is_bounded_in_inputs() {
    let mut h = Harness::new();
    h.policy.grants.insert(
        "fan-out".into(),
        Capabilities {
            parallel: true,
            ..Capabilities::default()
        },
    );
    let registry = h.registry(&["fan-out"]).await;
    let ctx = h.ctx("s");
    let within = text(registry.call(&ctx, "Flood", r#"{"count": 256}"#).await);
    assert_eq!(within, "256 results, 256 ok");
    let flood = text(registry.call(&ctx, "Flood", r#"{"count": 100000}"#).await);
    assert!(
        flood.starts_with("100000 results, 0 ok; first error: call-each takes at most 256"),
        "{flood}"
    );
}
