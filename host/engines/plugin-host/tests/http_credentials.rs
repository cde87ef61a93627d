//! The operator's HTTP credentials: the host adds the header to requests
//! for exactly the named host, replacing what the plugin set, only over
//! https or an explicit `http://` grant, and the secret never reaches the
//! plugin. The only server these tests talk to is one they start on
//! 127.0.0.1.

mod common;

use common::{Harness, manifest, registry_of, serve_http, text};
use kaizen_plugin_host::{Capabilities, HttpCredential};
use kaizen_tools::ToolRegistry;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};

const SECRET: &str = "brave-test-secret-7f3a9c";
const SECRET_ENV: &str = "KAIZEN_TEST_HTTP_CREDENTIAL_SECRET";
const UNSET_ENV: &str = "KAIZEN_TEST_HTTP_CREDENTIAL_UNSET";

/// Sets the secret once, before any test of this binary reads the
/// environment (every test passes through here first).
fn set_secret() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: every test calls this before starting anything that
        // reads the environment, and `call_once` blocks them until it is
        // done.
        unsafe {
            std::env::set_var(SECRET_ENV, SECRET);
            std::env::remove_var(UNSET_ENV);
        }
    });
}

/// A loopback server that answers with what it got in `x-subscription-token`:
/// `token: secret` (the right value, never echoed), `token: absent`, or
/// `token: other (N values)`. Counts requests.
async fn serve() -> (u16, Arc<AtomicUsize>) {
    serve_http(|head| {
        let values: Vec<&str> = head
            .lines()
            .filter_map(|line| line.split_once(':'))
            .filter(|(name, _)| name.eq_ignore_ascii_case("x-subscription-token"))
            .map(|(_, value)| value.trim())
            .collect();
        match values[..] {
            [] => "token: absent".to_string(),
            [only] if only == SECRET => "token: secret".to_string(),
            _ => format!("token: other ({} values)", values.len()),
        }
    })
    .await
}

/// Sets the secret, starts a [`serve`]r and a harness: the harness, the
/// server's `host:port` and its request count.
async fn server_and_harness() -> (Harness, String, Arc<AtomicUsize>) {
    set_secret();
    let (port, hits) = serve().await;
    (Harness::new(), format!("127.0.0.1:{port}"), hits)
}

fn credential(host: &str, env: &str, plugins: &[&str]) -> HttpCredential {
    HttpCredential {
        host: host.into(),
        header: "X-Subscription-Token".into(),
        env: env.into(),
        prefix: String::new(),
        plugins: plugins.iter().map(|p| p.to_string()).collect(),
    }
}

/// The http-probe plugin, named `name`, requesting `*` and granted
/// `granted`, with `credentials` configured.
async fn probe(
    h: &mut Harness,
    name: &str,
    granted: &[String],
    credentials: Vec<HttpCredential>,
) -> ToolRegistry {
    let dir = h.custom_plugin(
        name,
        "http-probe",
        &manifest(
            name,
            &format!("[capabilities]\nhttp = [\"*\"]\nenv = [\"PATH\", \"{SECRET_ENV}\"]"),
        ),
    );
    h.policy.grants.insert(
        name.into(),
        Capabilities {
            http: granted.to_vec(),
            env: vec!["*".into()],
            ..Capabilities::default()
        },
    );
    h.policy.http_credentials = credentials;
    registry_of(&h.load_dir(&dir).await.unwrap())
}

fn fetch(url: &str, token: Option<&str>) -> String {
    let headers: Vec<(&str, &str)> = token
        .map(|t| vec![("x-subscription-token", t)])
        .unwrap_or_default();
    json!({ "url": url, "headers": headers }).to_string()
}

/// What the plugin got fetching `url`, with `token` as its own header.
async fn fetched(h: &Harness, registry: &ToolRegistry, url: &str, token: Option<&str>) -> String {
    text(
        registry
            .call(&h.ctx("s"), "Fetch", &fetch(url, token))
            .await,
    )
}

#[tokio::test]
async fn the_host_adds_the_key_for_the_named_host_replacing_the_plugins_value() {
    let (mut h, host, hits) = server_and_harness().await;
    let registry = probe(
        &mut h,
        "search",
        &[format!("http://{host}")],
        vec![credential(&host, SECRET_ENV, &["search"])],
    )
    .await;
    let url = format!("http://{host}/res/v1/web/search?q=x");
    assert_eq!(
        fetched(&h, &registry, &url, None).await,
        "status: 200\ntoken: secret"
    );
    // A value the plugin set is replaced, not sent beside the key.
    assert_eq!(
        fetched(&h, &registry, &url, Some("forged")).await,
        "status: 200\ntoken: secret"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    // The plugin's environment has its grant, never the key.
    let env = text(registry.call(&h.ctx("s"), "ProbeEnv", "{}").await);
    assert!(!env.contains(SECRET), "{env}");
    assert!(!env.contains(SECRET_ENV), "{env}");
    assert!(
        env.contains(&format!("KAIZEN_HTTP_ALLOW=http://{host}")),
        "{env}"
    );
}

#[tokio::test]
async fn other_hosts_plugins_and_ports_get_no_key() {
    let (mut h, host, _) = server_and_harness().await;
    let (other_port, _) = serve().await;
    let other = format!("127.0.0.1:{other_port}");
    let granted = [format!("http://{host}"), format!("http://{other}")];
    for (plugin, configured, url) in [
        // The credential names one port: the other port gets nothing.
        (
            "search",
            credential(&host, SECRET_ENV, &["search"]),
            format!("http://{other}/"),
        ),
        // An entry that names no plugin goes to none.
        (
            "search",
            credential(&host, SECRET_ENV, &[]),
            format!("http://{host}/"),
        ),
        // A credential for another plugin is not added.
        (
            "fetcher",
            credential(&host, SECRET_ENV, &["search"]),
            format!("http://{host}/"),
        ),
        // An unset variable means no header (and no failure).
        (
            "search",
            credential(&host, UNSET_ENV, &["search"]),
            format!("http://{host}/"),
        ),
    ] {
        let registry = probe(&mut h, plugin, &granted, vec![configured]).await;
        assert_eq!(
            fetched(&h, &registry, &url, None).await,
            "status: 200\ntoken: absent",
            "{plugin} fetching {url}"
        );
    }
}

#[tokio::test]
async fn the_key_is_never_sent_over_plain_http_without_an_explicit_http_grant() {
    let (mut h, host, hits) = server_and_harness().await;
    // Granted without a scheme: plain http is allowed, but not with the key.
    let registry = probe(
        &mut h,
        "search",
        std::slice::from_ref(&host),
        vec![credential(&host, SECRET_ENV, &["search"])],
    )
    .await;
    let err = registry
        .call(
            &h.ctx("s"),
            "Fetch",
            &fetch(&format!("http://{host}/"), None),
        )
        .await
        .unwrap_err();
    assert!(
        err.message.contains("sent only over https"),
        "{}",
        err.message
    );
    assert!(!err.message.contains(SECRET), "{}", err.message);
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_grant_lists_credentials_by_name_only() {
    set_secret();
    let mut h = Harness::new();
    let host = "127.0.0.1:9".to_string();
    h.policy.http_credentials = vec![credential(&host, SECRET_ENV, &["search"])];
    h.policy.grants.insert(
        "search".into(),
        Capabilities {
            http: vec![format!("http://{host}")],
            ..Capabilities::default()
        },
    );
    let dir = h.custom_plugin(
        "search",
        "http-probe",
        &manifest("search", "[capabilities]\nhttp = [\"*\"]"),
    );
    let plugin = h.load_dir(&dir).await.unwrap();
    let shown = serde_json::to_string(&*plugin.grant).unwrap();
    assert!(shown.contains(SECRET_ENV), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
}
