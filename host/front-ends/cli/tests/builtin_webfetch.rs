//! The built-in `WebFetch` tool, embedded in the binary and called the way
//! the model would call it (`kaizen tools call`, and `kaizen run` for the
//! cache, which lives in a session). The only server is one the test
//! starts on 127.0.0.1.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;
mod web_server;

use common::session::Session;
use serde_json::{Value, json};
use std::process::Output;
use tempfile::TempDir;
use web_server::{Reply, WebServer};

const PAGE: &str = "<!doctype html><html><head><title>Kaizen docs</title>\
    <script>track()</script></head><body><h1>Getting started</h1>\
    <p>Install with <code>cargo install kaizen</code>, then read \
    <a href=\"/guide\">the guide</a>.</p><ul><li>fast</li><li>safe</li></ul></body></html>";

/// The site every test fetches from.
fn site() -> WebServer {
    WebServer::start(|request| match request.path.as_str() {
        "/page.html" => Reply::ok("text/html; charset=utf-8", PAGE),
        "/notes.txt" | "/cached.txt" => Reply::ok("text/plain", "first line\n<not html>\n"),
        "/big.txt" => Reply::ok("text/plain", "x".repeat(11 << 20)),
        "/old" => Reply::redirect(301, "/page.html"),
        "/away" => Reply::redirect(302, "http://127.0.0.2:9/elsewhere"),
        "/logo.png" => Reply::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
        _ => Reply::status(404, "text/html", "<h1>Nothing here</h1>"),
    })
}

/// A workspace whose user config grants `webfetch` the site (unless
/// `grant` is `None`: the built-in default grant).
struct Env {
    home: TempDir,
    workspace: TempDir,
}

impl Env {
    fn new(grant: Option<&str>) -> Self {
        let env = Self {
            home: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
        };
        if let Some(grant) = grant {
            std::fs::write(
                env.home.path().join("config.toml"),
                format!("[grants.webfetch]\nhttp = [\"{grant}\"]\n"),
            )
            .unwrap();
        }
        env
    }

    fn for_site(site: &WebServer) -> Self {
        Self::new(Some(&site.base()))
    }

    fn call(&self, input: Value) -> Output {
        common::kaizen(
            self.home.path(),
            self.workspace.path(),
            &["tools", "call", "WebFetch", &input.to_string()],
        )
    }

    /// The text WebFetch returned for `url`; it must succeed.
    fn text(&self, url: &str) -> String {
        common::succeeded(&self.call(json!({"url": url, "prompt": "What does it say?"})))
    }

    /// The error WebFetch failed with for `url`.
    fn error(&self, url: &str) -> String {
        let err = common::failed(&self.call(json!({"url": url, "prompt": "What does it say?"})));
        assert!(err.contains("WebFetch failed"), "{err}");
        err
    }
}

#[test]
fn html_comes_back_as_markdown_with_the_prompt() {
    let site = site();
    let env = Env::for_site(&site);
    let url = format!("{}/page.html", site.base());
    let text = env.text(&url);
    assert!(text.starts_with(&format!("URL: {url}\n")), "{text}");
    assert!(text.contains("# Getting started"), "{text}");
    assert!(text.contains("`cargo install kaizen`"), "{text}");
    assert!(text.contains("[the guide](/guide)"), "{text}");
    assert!(text.contains("*   fast"), "{text}");
    assert!(!text.contains("track()"), "{text}");
    assert!(text.contains("converted to Markdown"), "{text}");
    assert!(text.contains("Prompt: What does it say?"), "{text}");
    // Loopback keeps plain http: no upgrade note.
    assert!(!text.contains("upgraded"), "{text}");
    assert_eq!(site.hits("/page.html"), 1);
    let request = &site.requests()[0];
    assert_eq!(request.method, "GET");
    assert!(
        request
            .header("user-agent")
            .unwrap()
            .contains("Kaizen-WebFetch")
    );
}

#[test]
fn plain_text_comes_back_as_it_is() {
    let site = site();
    let env = Env::for_site(&site);
    let text = env.text(&format!("{}/notes.txt", site.base()));
    assert!(text.contains("first line\n<not html>\n"), "{text}");
    assert!(text.contains("text/plain"), "{text}");
    assert!(!text.contains("converted to Markdown"), "{text}");
}

#[test]
fn a_download_over_the_cap_is_cut_with_a_note() {
    let site = site();
    let env = Env::for_site(&site);
    let text = env.text(&format!("{}/big.txt", site.base()));
    assert!(
        text.contains("the download was cut at 10.0 MB"),
        "{text:.500}"
    );
    assert!(
        text.contains("The content was cut at 100000 of 10485760 characters"),
        "{}",
        &text[text.len().saturating_sub(500)..]
    );
}

#[test]
fn same_host_redirects_are_followed() {
    let site = site();
    let env = Env::for_site(&site);
    let text = env.text(&format!("{}/old", site.base()));
    assert!(
        text.starts_with(&format!("URL: {}/page.html\n", site.base())),
        "{text}"
    );
    assert!(text.contains("Redirected within the site"), "{text}");
    assert!(text.contains("# Getting started"), "{text}");
    assert_eq!(site.hits("/old"), 1);
    assert_eq!(site.hits("/page.html"), 1);
}

#[test]
fn cross_host_redirects_are_reported_with_their_target() {
    let site = site();
    let env = Env::for_site(&site);
    let text = env.text(&format!("{}/away", site.base()));
    assert!(text.contains("REDIRECT DETECTED"), "{text}");
    assert!(
        text.contains("Redirect URL: http://127.0.0.2:9/elsewhere"),
        "{text}"
    );
    assert!(text.contains("call WebFetch again"), "{text}");
    assert_eq!(site.requests().len(), 1);
}

#[test]
fn hosts_outside_the_grant_are_refused_with_how_to_grant_them() {
    let site = site();
    let env = Env::for_site(&site);
    // Another loopback address and another port: not in the grant.
    for url in [
        format!("http://127.0.0.2:{}/page.html", site.port),
        format!("http://127.0.0.1:{}/page.html", site.port.wrapping_add(1)),
    ] {
        let err = env.error(&url);
        assert!(err.contains("not among the hosts"), "{err}");
        assert!(err.contains(&format!("allowed: {}", site.base())), "{err}");
        assert!(err.contains("[grants.webfetch]"), "{err}");
    }
    assert!(site.requests().is_empty());
}

#[test]
fn the_default_grant_reaches_public_hosts_only() {
    let site = site();
    let env = Env::new(None);
    let err = env.error(&format!("{}/page.html", site.base()));
    assert!(err.contains("loopback or private-network address"), "{err}");
    assert!(err.contains("[grants.webfetch]"), "{err}");
    // The host says why, too.
    assert!(err.contains("internal address 127.0.0.1"), "{err}");
    assert!(site.requests().is_empty());
    // The listing shows the default grant.
    let out = common::kaizen(env.home.path(), env.workspace.path(), &["plugins", "list"]);
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("webfetch 0.1.0"), "{listing}");
    assert!(listing.contains("granted:   http *"), "{listing}");
}

#[test]
fn binary_content_is_refused() {
    let site = site();
    let env = Env::for_site(&site);
    let err = env.error(&format!("{}/logo.png", site.base()));
    assert!(err.contains("binary content (image/png"), "{err}");
}

#[test]
fn error_statuses_are_reported() {
    let site = site();
    let env = Env::for_site(&site);
    let err = env.error(&format!("{}/missing", site.base()));
    assert!(err.contains("returned HTTP 404 Not Found"), "{err}");
    assert!(err.contains("# Nothing here"), "{err}");
}

#[test]
fn bad_urls_are_refused_before_any_request() {
    let site = site();
    let env = Env::for_site(&site);
    let err = env.error("file:///etc/passwd");
    assert!(err.contains("only http:// and https://"), "{err}");
    assert!(site.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_fetch_in_a_session_is_served_from_the_cache() {
    let site = site();
    let env = Env::for_site(&site);
    let url = format!("{}/cached.txt", site.base());
    let fetch = ("WebFetch", json!({"url": url, "prompt": "first line?"}));
    let run = Session::new(env.home.path(), env.workspace.path())
        .run(&[fetch.clone(), fetch])
        .await;
    assert_eq!(
        run.output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.output.stderr)
    );
    let (first, second) = (&run.results[0], &run.results[1]);
    assert!(first.contains("first line"), "{first}");
    assert!(!first.contains("Served from the cache"), "{first}");
    assert!(
        second.contains("Served from the cache: fetched less than a minute ago"),
        "{second}"
    );
    assert!(second.contains("first line"), "{second}");
    assert_eq!(
        site.hits("/cached.txt"),
        1,
        "the second fetch must not reach the site"
    );
}
