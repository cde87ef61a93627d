//! Search providers: which one the operator configured, how to ask it
//! (one HTTP request) and how to read its answer.
//!
//! A provider is a [`Provider`] value; adding one means a variant, its
//! request and its parser. The API key is not here: the host adds it to
//! requests for the provider's host (the operator's `[[http.credentials]]`).

use kaizen_sdk::ToolError;
use kaizen_sdk::http::Request;
use kaizen_sdk::serde_json::{self, Value, json};
use url::Url;

/// The environment variable naming the provider (`brave` or `tavily`).
pub const PROVIDER_ENV: &str = "KAIZEN_WEBSEARCH_PROVIDER";

/// The environment variable overriding the provider's base URL (a proxy,
/// a self-hosted gateway, a test server).
pub const URL_ENV: &str = "KAIZEN_WEBSEARCH_URL";

/// The most results asked for.
const MAX_RESULTS: usize = 20;

/// A supported search API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Brave Search API: `GET /res/v1/web/search?q=`, key in
    /// `X-Subscription-Token`.
    Brave,
    /// Tavily: `POST /search` with a JSON body, key as a bearer token.
    Tavily,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    pub url: String,
    /// A few sentences from the page.
    pub snippet: String,
}

/// The configured provider and where to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Which API.
    pub provider: Provider,
    /// Its base URL, ending in `/`.
    pub base: Url,
}

impl Provider {
    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            Self::Brave => "Brave Search",
            Self::Tavily => "Tavily",
        }
    }

    /// The environment variable the host's default credential reads the
    /// key from.
    pub fn key_env(self) -> &'static str {
        match self {
            Self::Brave => "BRAVE_SEARCH_API_KEY",
            Self::Tavily => "TAVILY_API_KEY",
        }
    }

    fn default_base(self) -> &'static str {
        match self {
            Self::Brave => "https://api.search.brave.com/",
            Self::Tavily => "https://api.tavily.com/",
        }
    }
}

impl Config {
    /// The configuration from the plugin's environment.
    pub fn from_env() -> Result<Config, ToolError> {
        let provider = std::env::var(PROVIDER_ENV).ok();
        let base = std::env::var(URL_ENV).ok();
        Config::from_values(provider.as_deref(), base.as_deref())
    }

    /// The configuration from the two values; an error that says how to
    /// configure a provider when there is none.
    pub fn from_values(provider: Option<&str>, base: Option<&str>) -> Result<Config, ToolError> {
        let provider = match provider.map(|p| p.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") => return Err(not_configured()),
            Some("brave") => Provider::Brave,
            Some("tavily") => Provider::Tavily,
            Some(other) => {
                return Err(ToolError::failed(format!(
                    "WebSearch is configured with the search provider `{other}`, which it does \
                     not know; it supports `brave` (Brave Search API) and `tavily`. Tell the \
                     user: the operator sets {PROVIDER_ENV} to one of those."
                )));
            }
        };
        let text = base
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .unwrap_or(provider.default_base());
        let mut base = Url::parse(text)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "{URL_ENV} is `{text}`, which is not an http:// or https:// URL. Tell the \
                     user: the operator sets it to the provider's base URL, or leaves it unset."
                ))
            })?;
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        Ok(Config { provider, base })
    }

    /// The request for `query`, with the domain filters passed to the API
    /// as far as it supports them (results are filtered again after).
    pub fn request(&self, query: &str, allowed: &[String], blocked: &[String]) -> Request {
        match self.provider {
            Provider::Brave => {
                let mut url = self.endpoint("res/v1/web/search");
                url.query_pairs_mut()
                    .append_pair("q", &brave_query(query, allowed, blocked))
                    .append_pair("count", &MAX_RESULTS.to_string());
                Request::get(url.as_str()).header("accept", "application/json")
            }
            Provider::Tavily => {
                let mut body = json!({
                    "query": query,
                    "max_results": MAX_RESULTS,
                    "search_depth": "basic",
                });
                if !allowed.is_empty() {
                    body["include_domains"] = json!(allowed);
                }
                if !blocked.is_empty() {
                    body["exclude_domains"] = json!(blocked);
                }
                Request::post(self.endpoint("search").as_str(), body.to_string())
                    .header("content-type", "application/json")
                    .header("accept", "application/json")
            }
        }
    }

    fn endpoint(&self, path: &str) -> Url {
        // The base ends in `/`, so the path is appended to it.
        self.base.join(path).unwrap_or_else(|_| self.base.clone())
    }

    /// The results in a successful response body.
    pub fn parse(&self, body: &[u8]) -> Result<Vec<SearchResult>, ToolError> {
        let value: Value = serde_json::from_slice(body).map_err(|err| {
            ToolError::failed(format!(
                "The search provider ({}) answered with something that is not JSON ({err}). \
                 Try again later; if it persists, tell the user the provider's URL may be wrong.",
                self.provider.label()
            ))
        })?;
        let (list, snippet_key) = match self.provider {
            Provider::Brave => (&value["web"]["results"], "description"),
            Provider::Tavily => (&value["results"], "content"),
        };
        let results = list
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|item| {
                let url = item["url"].as_str()?.to_owned();
                let title = clean(item["title"].as_str().unwrap_or(&url));
                let snippet = clean(item[snippet_key].as_str().unwrap_or_default());
                Some(SearchResult {
                    title,
                    url,
                    snippet,
                })
            })
            .collect();
        Ok(results)
    }
}

/// The query with Brave's search operators for the domain filters: one
/// allowed domain as `site:`, blocked ones as `-site:`.
fn brave_query(query: &str, allowed: &[String], blocked: &[String]) -> String {
    let mut q = query.to_owned();
    if let [only] = allowed {
        q.push_str(&format!(" site:{only}"));
    }
    for domain in blocked {
        q.push_str(&format!(" -site:{domain}"));
    }
    q
}

/// Text without HTML tags (Brave marks matches with `<strong>`), entities
/// decoded, whitespace collapsed.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let decoded = out
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The error when no provider is configured: what the operator does.
fn not_configured() -> ToolError {
    ToolError::failed(format!(
        "WebSearch has no search provider configured, so it cannot search. Do not retry; tell \
         the user. The operator sets one up in kaizen's environment before starting it:\n  \
         export {PROVIDER_ENV}=brave      # or tavily\n  \
         export BRAVE_SEARCH_API_KEY=...   # or TAVILY_API_KEY=...\n\
         The key stays in the host, which adds it to requests for the provider's API; the \
         plugin never sees it (docs/tools.md, \"Web tools\"). Meanwhile, answer from what you know, \
         or fetch a page you know the URL of with WebFetch."
    ))
}
