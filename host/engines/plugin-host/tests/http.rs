//! Outbound HTTP through wasi:http: only hosts on the allow-list, and
//! loopback only when the grant names it exactly. The only server these
//! tests talk to is one they start on 127.0.0.1.

mod common;

use common::{Harness, manifest, registry_of, serve_http, text};
use kaizen_plugin_host::Capabilities;
use kaizen_tools::ToolRegistry;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpListener;

/// A loopback HTTP server answering every request with `hello over http`;
/// counts the requests it served.
async fn serve() -> (u16, Arc<AtomicUsize>) {
    serve_http(|_| "hello over http".to_owned()).await
}

/// The http-probe plugin requesting `requested` under a grant of `granted`.
async fn probe(h: &mut Harness, requested: &[&str], granted: &[&str]) -> ToolRegistry {
    probe_with_limits(h, requested, granted, "").await
}

async fn probe_with_limits(
    h: &mut Harness,
    requested: &[&str],
    granted: &[&str],
    limits: &str,
) -> ToolRegistry {
    let list = |items: &[&str]| {
        items
            .iter()
            .map(|i| format!("\"{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let extra = format!("[capabilities]\nhttp = [{}]\n{limits}", list(requested));
    let dir = h.custom_plugin("http-probe", "http-probe", &manifest("http-probe", &extra));
    h.policy.grants.insert(
        "http-probe".into(),
        Capabilities {
            http: granted.iter().map(|g| g.to_string()).collect(),
            ..Capabilities::default()
        },
    );
    registry_of(&h.load_dir(&dir).await.unwrap())
}

fn fetch(url: &str) -> String {
    json!({ "url": url }).to_string()
}

#[tokio::test]
async fn loopback_named_exactly_in_the_grant_is_reachable() {
    let (port, hits) = serve().await;
    let mut h = Harness::new();
    let host = format!("127.0.0.1:{port}");
    let registry = probe(&mut h, &[&host], &[&host]).await;
    let out = text(
        registry
            .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{host}/x")))
            .await,
    );
    assert_eq!(out, "status: 200\nhello over http");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn loopback_behind_a_wildcard_is_refused() {
    let (port, hits) = serve().await;
    let mut h = Harness::new();
    let registry = probe(&mut h, &["*"], &["*"]).await;
    let err = registry
        .call(
            &h.ctx("s"),
            "Fetch",
            &fetch(&format!("http://127.0.0.1:{port}/")),
        )
        .await
        .unwrap_err();
    assert!(
        err.message.contains("internal address 127.0.0.1"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("names the host exactly"),
        "{}",
        err.message
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the request must not reach the server"
    );
}

#[tokio::test]
async fn hosts_off_the_allow_list_are_refused_before_any_connection() {
    let (port, hits) = serve().await;
    let mut h = Harness::new();
    let allowed = format!("127.0.0.1:{port}");
    let registry = probe(&mut h, &[&allowed], &[&allowed]).await;
    // Another port on the same host, another loopback address, a name: all
    // off the list, so the host neither resolves nor connects.
    for url in [
        format!("http://127.0.0.1:{}/", port.wrapping_add(1)),
        format!("http://127.0.0.2:{port}/"),
        "https://not-on-the-list.invalid/".to_string(),
    ] {
        let err = registry
            .call(&h.ctx("s"), "Fetch", &fetch(&url))
            .await
            .unwrap_err();
        assert!(
            err.message
                .contains("not in plugin `http-probe`'s http grant"),
            "{url}: {}",
            err.message
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    // The allowed target still works afterwards.
    let out = text(
        registry
            .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{allowed}/")))
            .await,
    );
    assert!(out.starts_with("status: 200"), "{out}");
}

#[tokio::test]
async fn a_request_beyond_the_grant_is_cut_from_the_allow_list() {
    let (port, hits) = serve().await;
    let mut h = Harness::new();
    let host = format!("127.0.0.1:{port}");
    // Requested, but the operator granted something else.
    let registry = probe(&mut h, &[&host, "api.example.com"], &["api.example.com"]).await;
    let err = registry
        .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{host}/")))
        .await
        .unwrap_err();
    assert!(
        err.message.contains("granted: api.example.com"),
        "{}",
        err.message
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_response_that_never_comes_is_cut_off_at_the_time_limit() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut h = Harness::new();
    let host = format!("127.0.0.1:{port}");
    let registry =
        probe_with_limits(&mut h, &[&host], &[&host], "[limits]\ncpu-seconds = 0.5").await;
    let err = registry
        .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{host}/")))
        .await
        .unwrap_err();
    assert_eq!(
        err.kind,
        kaizen_tools::ToolErrorKind::Timeout,
        "{}",
        err.message
    );
    assert!(
        err.message.contains("time limit of 0.5 s"),
        "{}",
        err.message
    );
    // A fresh instance serves the next call.
    let (port, _) = serve().await;
    let ok = format!("127.0.0.1:{port}");
    let registry = probe(&mut h, &[&ok], &[&ok]).await;
    let out = text(
        registry
            .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{ok}/")))
            .await,
    );
    assert!(out.starts_with("status: 200"), "{out}");
}

#[tokio::test]
async fn an_exact_entry_beside_a_wildcard_opens_loopback() {
    let (port, hits) = serve().await;
    let mut h = Harness::new();
    let host = format!("127.0.0.1:{port}");
    let registry = probe(&mut h, &["*"], &["*", &host]).await;
    let out = text(
        registry
            .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{host}/")))
            .await,
    );
    assert_eq!(out, "status: 200\nhello over http");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_refusal_is_reported_with_its_own_call_only() {
    let (port, _) = serve().await;
    // A port with no server: connecting fails without any refusal.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut h = Harness::new();
    let host = format!("127.0.0.1:{port}");
    let dead = format!("127.0.0.1:{closed_port}");
    let extra = format!("stateful = true\n[capabilities]\nhttp = [\"{host}\", \"{dead}\"]");
    let manifest = manifest("http-probe", "").replace(
        "component = \"component.wasm\"\n",
        &format!("component = \"component.wasm\"\n{extra}"),
    );
    let dir = h.custom_plugin("http-probe", "http-probe", &manifest);
    h.policy.grants.insert(
        "http-probe".into(),
        Capabilities {
            http: vec![host.clone(), dead.clone()],
            ..Capabilities::default()
        },
    );
    let registry = registry_of(&h.load_dir(&dir).await.unwrap());
    let refused = registry
        .call(&h.ctx("s"), "Fetch", &fetch("http://127.0.0.2:1/"))
        .await
        .unwrap_err();
    assert!(refused.message.contains("Host: "), "{}", refused.message);
    // The same instance's next failure carries no stale refusal.
    let failed = registry
        .call(&h.ctx("s"), "Fetch", &fetch(&format!("http://{dead}/")))
        .await
        .unwrap_err();
    assert!(!failed.message.contains("Host: "), "{}", failed.message);
}
