//! Native tests over a scripted provider.

use super::*;
use kaizen_sdk::{Content, ErrorKind};

fn brave(base: Option<&str>) -> Config {
    Config::from_values(Some("brave"), base).unwrap()
}

fn input(query: &str, allowed: &[&str], blocked: &[&str]) -> WebSearchInput {
    let list =
        |items: &[&str]| (!items.is_empty()).then(|| items.iter().map(|s| s.to_string()).collect());
    WebSearchInput {
        query: query.into(),
        allowed_domains: list(allowed),
        blocked_domains: list(blocked),
    }
}

fn json_response(status: u16, body: &str) -> Response {
    Response {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
        truncated: false,
    }
}

const BRAVE_BODY: &str = r#"{"type":"search","web":{"results":[
  {"title":"The <strong>Rust</strong> Book","url":"https://doc.rust-lang.org/book/","description":"Learn <strong>Rust</strong> &amp; more"},
  {"title":"Rust on docs.rs","url":"https://docs.rs/rand","description":"rand crate"},
  {"title":"Spam","url":"https://www.spam.example/rust","description":"buy"}
]}}"#;

/// Runs a search; the requests sent are returned too.
fn search(
    config: &Config,
    input: &WebSearchInput,
    response: Response,
) -> (Result<Output, ToolError>, Vec<Request>) {
    let mut seen = Vec::new();
    let mut send = |request: &Request| {
        seen.push(request.clone());
        Ok(response.clone())
    };
    let result = web_search(&mut send, config, input);
    (result, seen)
}

fn text_of(output: &Output) -> &str {
    match &output.content[..] {
        [Content::Text(text)] => text,
        other => panic!("one text part expected: {other:?}"),
    }
}

#[test]
fn brave_results_are_numbered_with_titles_urls_and_snippets() {
    let (result, seen) = search(
        &brave(None),
        &input("rust book", &[], &[]),
        json_response(200, BRAVE_BODY),
    );
    let output = result.unwrap();
    let text = text_of(&output);
    assert!(
        text.starts_with("Web search results for \"rust book\" (Brave Search: 3 results):"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n1. The Rust Book\n   https://doc.rust-lang.org/book/\n   Learn Rust & more\n"
        ),
        "{text}"
    );
    assert!(text.contains("\n3. Spam\n"), "{text}");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method(), "GET");
    assert_eq!(
        seen[0].url(),
        "https://api.search.brave.com/res/v1/web/search?q=rust+book&count=20"
    );
    // The plugin never sets the key: the host adds it.
    assert!(
        seen[0]
            .headers()
            .iter()
            .all(|(name, _)| !name.eq_ignore_ascii_case("x-subscription-token"))
    );
}

#[test]
fn domain_filters_go_to_the_api_and_apply_to_results() {
    let (result, seen) = search(
        &brave(Some("http://127.0.0.1:9/proxy")),
        &input(
            "rust",
            &["https://www.rust-lang.org/learn"],
            &["spam.example"],
        ),
        json_response(200, BRAVE_BODY),
    );
    let output = result.unwrap();
    let text = text_of(&output);
    assert!(
        text.contains("1 result, 2 more left out by the domain filters"),
        "{text}"
    );
    assert!(text.contains("doc.rust-lang.org"), "{text}");
    assert!(!text.contains("docs.rs"), "{text}");
    assert_eq!(
        seen[0].url(),
        "http://127.0.0.1:9/proxy/res/v1/web/search?q=rust+site%3Arust-lang.org+-site%3Aspam.example&count=20"
    );
    let (result, _) = search(
        &brave(None),
        &input("rust", &[], &["rust-lang.org", "*.spam.example"]),
        json_response(200, BRAVE_BODY),
    );
    let output = result.unwrap();
    let text = text_of(&output);
    assert!(text.contains("1. Rust on docs.rs"), "{text}");
    assert!(!text.contains("Spam"), "{text}");
}

#[test]
fn tavily_gets_a_json_body_with_domain_lists() {
    let config = Config::from_values(Some("Tavily"), None).unwrap();
    let body = r#"{"results":[{"title":"T","url":"https://a.org/x","content":"c"}]}"#;
    let (result, seen) = search(
        &config,
        &input("q words", &["a.org"], &["b.org"]),
        json_response(200, body),
    );
    let output = result.unwrap();
    assert!(text_of(&output).contains("1. T\n   https://a.org/x\n   c\n"));
    assert_eq!(seen[0].method(), "POST");
    assert_eq!(seen[0].url(), "https://api.tavily.com/search");
    let sent: Value = serde_json::from_slice(seen[0].body_bytes().unwrap()).unwrap();
    assert_eq!(sent["query"], "q words");
    assert_eq!(sent["include_domains"], json!(["a.org"]));
    assert_eq!(sent["exclude_domains"], json!(["b.org"]));
}

use kaizen_sdk::serde_json::{self, Value};

#[test]
fn no_provider_is_a_clear_error() {
    for value in [None, Some(""), Some("  ")] {
        let err = Config::from_values(value, None).unwrap_err();
        assert!(
            err.message().contains("no search provider configured"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("KAIZEN_WEBSEARCH_PROVIDER=brave"));
        assert!(err.message().contains("BRAVE_SEARCH_API_KEY"));
    }
    let err = Config::from_values(Some("bing"), None).unwrap_err();
    assert!(err.message().contains("`bing`"), "{}", err.message());
    let err = Config::from_values(Some("brave"), Some("not a url")).unwrap_err();
    assert!(
        err.message().contains("KAIZEN_WEBSEARCH_URL"),
        "{}",
        err.message()
    );
}

#[test]
fn api_errors_report_their_status() {
    let (result, _) = search(
        &brave(None),
        &input("rust", &[], &[]),
        json_response(401, r#"{"error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}"#),
    );
    let err = result.unwrap_err();
    assert!(
        err.message().contains("answered HTTP 401"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("BRAVE_SEARCH_API_KEY"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("SUBSCRIPTION_TOKEN_INVALID"),
        "{}",
        err.message()
    );
    let (result, _) = search(
        &brave(None),
        &input("rust", &[], &[]),
        json_response(429, "slow down"),
    );
    assert!(result.unwrap_err().message().contains("rate-limiting"));
}

#[test]
fn unreachable_providers_say_how_to_grant_them() {
    let mut send = |_: &Request| -> Result<Response, HttpError> {
        Err(HttpError {
            kind: HttpErrorKind::Refused,
            message: "not in the grant".into(),
        })
    };
    let err = web_search(
        &mut send,
        &brave(Some("http://127.0.0.1:7")),
        &input("rust", &[], &[]),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    assert!(
        err.message().contains("\"http://127.0.0.1\""),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("[grants.websearch]"),
        "{}",
        err.message()
    );
}

#[test]
fn empty_results_and_bad_input() {
    let (result, _) = search(
        &brave(None),
        &input("zzzz", &[], &[]),
        json_response(200, r#"{"type":"search"}"#),
    );
    assert!(text_of(&result.unwrap()).starts_with("No results for \"zzzz\""));
    let (result, seen) = search(
        &brave(None),
        &input("a", &[], &[]),
        json_response(200, "{}"),
    );
    assert!(
        result
            .unwrap_err()
            .message()
            .contains("at least 2 characters")
    );
    assert!(seen.is_empty());
    let (result, _) = search(
        &brave(None),
        &input("rust", &["not a domain"], &[]),
        json_response(200, "{}"),
    );
    assert!(result.unwrap_err().message().contains("is not a domain"));
    let (result, _) = search(
        &brave(None),
        &input("rust", &[], &[]),
        json_response(200, "<html>"),
    );
    assert!(result.unwrap_err().message().contains("not JSON"));
}

#[test]
fn snippets_lose_markup() {
    assert_eq!(
        provider::clean("a <strong>b</strong>\n  c &amp; d &#39;e&#39;"),
        "a b c & d 'e'"
    );
}
