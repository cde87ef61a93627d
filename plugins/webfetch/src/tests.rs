//! Native tests of the whole tool over a scripted `send`.

use super::*;
use crate::content::Kind;
use kaizen_sdk::http::{HttpError, HttpErrorKind, Request, Response};
use kaizen_sdk::{Content, ErrorKind};

/// A scripted server: answers by URL, records every request.
#[derive(Default)]
struct Server {
    routes: Vec<(String, Result<Response, HttpError>)>,
    seen: Vec<String>,
}

impl Server {
    fn route(mut self, url: &str, response: Response) -> Self {
        self.routes.push((url.into(), Ok(response)));
        self
    }

    fn fail(mut self, url: &str, kind: HttpErrorKind) -> Self {
        let error = HttpError {
            kind,
            message: format!("{kind:?}"),
        };
        self.routes.push((url.into(), Err(error)));
        self
    }

    fn send(&mut self, request: &Request) -> Result<Response, HttpError> {
        self.seen.push(request.url().to_owned());
        self.routes
            .iter()
            .find(|(url, _)| url == request.url())
            .map(|(_, response)| response.clone())
            .unwrap_or_else(|| panic!("unexpected request for {}", request.url()))
    }
}

fn ok(content_type: &str, body: &str) -> Response {
    Response {
        status: 200,
        headers: vec![("content-type".into(), content_type.into())],
        body: body.as_bytes().to_vec(),
        truncated: false,
    }
}

fn status(code: u16, headers: &[(&str, &str)], body: &str) -> Response {
    Response {
        status: code,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.as_bytes().to_vec(),
        truncated: false,
    }
}

fn input(url: &str) -> WebFetchInput {
    WebFetchInput {
        url: url.into(),
        prompt: "What is on the page?".into(),
    }
}

/// Runs the tool against `server` with `grant` (none: the host reported
/// no grant).
fn run(
    server: &mut Server,
    cache: &mut Cache,
    grant: Option<&str>,
    url: &str,
    now: Instant,
) -> Result<Output, ToolError> {
    let grant = grant.map(Grant::parse);
    let mut send = |request: &Request| server.send(request);
    web_fetch(&mut send, cache, grant.as_ref(), &input(url), now)
}

fn text_of(output: &Output) -> &str {
    match &output.content[..] {
        [Content::Text(text)] => text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

fn fetch_text(server: &mut Server, url: &str) -> String {
    let output = run(server, &mut Cache::new(), Some("*"), url, Instant::now()).unwrap();
    text_of(&output).to_owned()
}

#[test]
fn html_becomes_markdown_without_scripts() {
    let html = "<!doctype html><html><head><title>T</title><script>var x = 1;</script>\
        <style>body{}</style></head><body><h1>Install</h1><p>Run <code>cargo add kaizen</code> \
        and read <a href=\"https://docs.example.com/guide\">the guide</a>.</p>\
        <ul><li>one</li><li>two</li></ul></body></html>";
    let mut server =
        Server::default().route("https://example.com/", ok("text/html; charset=utf-8", html));
    let text = fetch_text(&mut server, "https://example.com/");
    assert!(text.contains("# Install"), "{text}");
    assert!(text.contains("`cargo add kaizen`"), "{text}");
    assert!(
        text.contains("[the guide](https://docs.example.com/guide)"),
        "{text}"
    );
    assert!(text.contains("*   one"), "{text}");
    assert!(!text.contains("var x"), "{text}");
    assert!(!text.contains("body{}"), "{text}");
    assert!(text.contains("converted to Markdown"), "{text}");
    assert!(text.contains("Prompt: What is on the page?"), "{text}");
    assert!(text.starts_with("URL: https://example.com/\n"), "{text}");
}

#[test]
fn text_and_json_come_back_as_they_are() {
    let mut server = Server::default()
        .route(
            "https://example.com/a.txt",
            ok("text/plain", "line 1\n<b>not html</b>\n"),
        )
        .route(
            "https://example.com/a.json",
            ok("application/json", "{\"a\": [1, 2]}"),
        );
    let text = fetch_text(&mut server, "https://example.com/a.txt");
    assert!(text.contains("line 1\n<b>not html</b>\n"), "{text}");
    assert!(!text.contains("converted to Markdown"), "{text}");
    let text = fetch_text(&mut server, "https://example.com/a.json");
    assert!(text.contains("{\"a\": [1, 2]}"), "{text}");
}

#[test]
fn a_missing_content_type_is_sniffed() {
    assert_eq!(content::classify(None, b"<!DOCTYPE html><p>x"), Kind::Html);
    assert_eq!(content::classify(None, b"plain words"), Kind::Text);
    assert!(matches!(
        content::classify(Some("application/octet-stream"), b"\x89PNG\r\n\x1a\n\0\0"),
        Kind::Binary(_)
    ));
    assert_eq!(
        content::classify(Some("application/vnd.api+json"), b"{}"),
        Kind::Text
    );
}

#[test]
fn binary_content_is_refused() {
    let png = Response {
        body: vec![0x89, b'P', b'N', b'G', 0, 0, 1],
        ..ok("image/png", "")
    };
    let mut server = Server::default().route("https://example.com/logo.png", png);
    let err = run(
        &mut server,
        &mut Cache::new(),
        Some("*"),
        "https://example.com/logo.png",
        Instant::now(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.message().contains("binary content (image/png"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("HTML or text version"),
        "{}",
        err.message()
    );
}

#[test]
fn a_cut_download_says_so() {
    let big = Response {
        truncated: true,
        ..ok("text/plain", "start of a huge file")
    };
    let mut server = Server::default().route("https://example.com/huge", big);
    let text = fetch_text(&mut server, "https://example.com/huge");
    assert!(text.contains("the download was cut at 10.0 MB"), "{text}");
    assert!(text.contains("start of a huge file"), "{text}");
}

#[test]
fn long_text_is_cut_for_the_model_with_a_note() {
    let long = "word ".repeat(30_000);
    let mut server = Server::default().route("https://example.com/long", ok("text/plain", &long));
    let text = fetch_text(&mut server, "https://example.com/long");
    assert!(
        text.contains("The content was cut at 100000 of 150000 characters"),
        "{text}"
    );
    assert!(text.len() < 101_500, "{}", text.len());
}

#[test]
fn same_host_redirects_are_followed() {
    let mut server = Server::default()
        .route(
            "https://example.com/old",
            status(301, &[("location", "/new")], ""),
        )
        .route(
            "https://example.com/new",
            status(302, &[("location", "https://www.example.com/final")], ""),
        )
        .route("https://www.example.com/final", ok("text/plain", "arrived"));
    let text = fetch_text(&mut server, "https://example.com/old");
    assert!(
        text.starts_with("URL: https://www.example.com/final\n"),
        "{text}"
    );
    assert!(
        text.contains("Redirected within the site from https://example.com/old"),
        "{text}"
    );
    assert!(text.contains("arrived"), "{text}");
    assert_eq!(server.seen.len(), 3);
}

#[test]
fn cross_host_redirects_are_reported_not_followed() {
    let mut server = Server::default().route(
        "https://example.com/go",
        status(302, &[("location", "https://other.org/page?x=1")], ""),
    );
    let text = fetch_text(&mut server, "https://example.com/go");
    assert!(text.contains("REDIRECT DETECTED"), "{text}");
    assert!(
        text.contains("Redirect URL: https://other.org/page?x=1"),
        "{text}"
    );
    assert!(text.contains("302 Found"), "{text}");
    assert!(text.contains("call WebFetch again"), "{text}");
    assert_eq!(server.seen, ["https://example.com/go"]);
}

#[test]
fn a_downgrade_to_http_is_reported_not_followed() {
    let mut server = Server::default().route(
        "https://example.com/",
        status(301, &[("location", "http://example.com/")], ""),
    );
    let text = fetch_text(&mut server, "https://example.com/");
    assert!(text.contains("Redirect URL: http://example.com/"), "{text}");
}

#[test]
fn redirect_loops_stop_after_five_hops() {
    let mut server = Server::default()
        .route(
            "https://example.com/a",
            status(302, &[("location", "/b")], ""),
        )
        .route(
            "https://example.com/b",
            status(302, &[("location", "/a")], ""),
        );
    let err = run(
        &mut server,
        &mut Cache::new(),
        Some("*"),
        "https://example.com/a",
        Instant::now(),
    )
    .unwrap_err();
    assert!(
        err.message().contains("more than 5 times"),
        "{}",
        err.message()
    );
    assert_eq!(server.seen.len(), 6);
}

#[test]
fn error_statuses_are_reported_with_the_page() {
    let mut server = Server::default()
        .route(
            "https://example.com/gone",
            status(
                404,
                &[("content-type", "text/html")],
                "<h1>No such page</h1>",
            ),
        )
        .route(
            "https://example.com/broken",
            status(503, &[("content-type", "text/plain")], "maintenance"),
        );
    let err = run(
        &mut server,
        &mut Cache::new(),
        Some("*"),
        "https://example.com/gone",
        Instant::now(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.message().contains("returned HTTP 404 Not Found"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("# No such page"),
        "{}",
        err.message()
    );
    let err = run(
        &mut server,
        &mut Cache::new(),
        Some("*"),
        "https://example.com/broken",
        Instant::now(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Failed);
    assert!(
        err.message().contains("503 Service Unavailable"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("maintenance"), "{}", err.message());
}

#[test]
fn hosts_outside_the_grant_are_refused_before_any_request() {
    let mut server = Server::default();
    let err = run(
        &mut server,
        &mut Cache::new(),
        Some("docs.rs *.github.com"),
        "https://example.com/",
        Instant::now(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    let message = err.message();
    assert!(
        message.contains("allowed: docs.rs, *.github.com"),
        "{message}"
    );
    assert!(message.contains("[grants.webfetch]"), "{message}");
    assert!(server.seen.is_empty());
}

#[test]
fn host_refusals_explain_how_to_grant() {
    let mut server = Server::default()
        .fail("https://example.com/", HttpErrorKind::Refused)
        .fail("http://10.0.0.5/", HttpErrorKind::AddressProhibited)
        .fail("https://nope.invalid/", HttpErrorKind::DnsFailed);
    let fail = |server: &mut Server, url: &str| {
        run(server, &mut Cache::new(), None, url, Instant::now()).unwrap_err()
    };
    let err = fail(&mut server, "https://example.com/");
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    assert!(
        err.message().contains("[grants.webfetch]"),
        "{}",
        err.message()
    );
    // A private address is not upgraded by the grant rule, but by the
    // loopback rule only; 10.0.0.5 is not loopback.
    let mut private = Server::default().fail("https://10.0.0.5/", HttpErrorKind::AddressProhibited);
    let err = fail(&mut private, "http://10.0.0.5/");
    assert!(
        err.message().contains("loopback or private-network"),
        "{}",
        err.message()
    );
    let err = fail(&mut server, "https://nope.invalid/");
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.message().contains("could not be resolved"),
        "{}",
        err.message()
    );
}

#[test]
fn an_empty_prompt_is_refused() {
    let mut send = |_: &Request| -> Result<Response, HttpError> { unreachable!() };
    let input = WebFetchInput {
        url: "https://example.com/".into(),
        prompt: "  ".into(),
    };
    let err = web_fetch(&mut send, &mut Cache::new(), None, &input, Instant::now()).unwrap_err();
    assert!(
        err.message().contains("`prompt` is empty"),
        "{}",
        err.message()
    );
}

#[test]
fn pages_are_served_from_the_cache_for_fifteen_minutes() {
    let mut server =
        Server::default().route("https://example.com/", ok("text/plain", "cached body"));
    let mut cache = Cache::new();
    let start = Instant::now();
    let first = run(
        &mut server,
        &mut cache,
        Some("*"),
        "https://example.com/",
        start,
    )
    .unwrap();
    assert!(!text_of(&first).contains("Served from the cache"));
    // Asked as http://, the same page (upgraded to https) comes from the cache.
    let later = start + Duration::from_secs(14 * 60);
    let second = run(
        &mut server,
        &mut cache,
        Some("*"),
        "http://example.com/",
        later,
    )
    .unwrap();
    let text = text_of(&second);
    assert!(
        text.contains("Served from the cache: fetched 14 minutes ago"),
        "{text}"
    );
    assert!(text.contains("cached body"), "{text}");
    assert_eq!(server.seen.len(), 1);
    assert_eq!(second.metadata.as_ref().unwrap()["cached"], true);
    // After fifteen minutes it is fetched again.
    let expired = start + Duration::from_secs(15 * 60 + 1);
    run(
        &mut server,
        &mut cache,
        Some("*"),
        "https://example.com/",
        expired,
    )
    .unwrap();
    assert_eq!(server.seen.len(), 2);
}

#[test]
fn redirect_reports_and_errors_are_not_cached() {
    let mut server = Server::default()
        .route(
            "https://example.com/go",
            status(302, &[("location", "https://other.org/")], ""),
        )
        .route("https://example.com/404", status(404, &[], ""));
    let mut cache = Cache::new();
    let now = Instant::now();
    for _ in 0..2 {
        run(
            &mut server,
            &mut cache,
            Some("*"),
            "https://example.com/go",
            now,
        )
        .unwrap();
        run(
            &mut server,
            &mut cache,
            Some("*"),
            "https://example.com/404",
            now,
        )
        .unwrap_err();
    }
    assert_eq!(server.seen.len(), 4);
}
