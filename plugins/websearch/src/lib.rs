//! `websearch`: the built-in `WebSearch` tool, which searches the web
//! through a search provider the operator configured, as Claude Code's tool
//! of the same name does.
//!
//! - Providers ([`provider`]): the Brave Search API and Tavily, chosen with
//!   `KAIZEN_WEBSEARCH_PROVIDER`; `KAIZEN_WEBSEARCH_URL` overrides the API's
//!   base URL. Without a provider, the error says how to configure one.
//! - The API key never reaches the plugin: the host adds it to requests
//!   for the provider's host (`[[http.credentials]]`; built-in defaults
//!   read `BRAVE_SEARCH_API_KEY` and `TAVILY_API_KEY`).
//! - `allowed_domains` and `blocked_domains` are passed to the API where
//!   it supports them and applied to the results in any case.
//! - Results are numbered, each with its title, URL and snippet.

mod provider;

use kaizen_sdk::http::{HttpError, HttpErrorKind, Request, Response};
use kaizen_sdk::prelude::*;
use url::Url;

use crate::provider::{Config, SearchResult};

/// How much of an error response is quoted.
const ERROR_EXCERPT_CHARS: usize = 500;

/// Input of `WebSearch`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct WebSearchInput {
    /// The search query to use.
    query: String,
    /// Only include search results from these domains (e.g. "docs.rs"; subdomains match too).
    allowed_domains: Option<Vec<String>>,
    /// Never include search results from these domains (subdomains match too).
    blocked_domains: Option<Vec<String>>,
}

/// The `WebSearch` tool.
struct WebSearch;

impl Tool for WebSearch {
    const NAME: &'static str = "WebSearch";
    const DESCRIPTION: &'static str = "\
Searches the web and returns the results, numbered, each with its title, URL and a snippet.
- Use it for information beyond your knowledge: recent events, current documentation, \
versions released after your training.
- `allowed_domains` keeps only results from those domains; `blocked_domains` drops results \
from them (subdomains count as the domain).
- Cite the sources you use with their URLs. To read a result in full, fetch it with WebFetch.
- It searches through the search provider the operator configured; when none is configured, \
it says so and you should answer from what you know.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Dangerous;
    type Input = WebSearchInput;

    fn call(_ctx: &CallContext, input: WebSearchInput) -> Result<Output, ToolError> {
        let config = Config::from_env()?;
        web_search(&mut kaizen_sdk::http::send, &config, &input)
    }
}

export_tools!(WebSearch);

/// The whole tool, sending requests through `send`.
fn web_search(
    send: &mut dyn FnMut(&Request) -> Result<Response, HttpError>,
    config: &Config,
    input: &WebSearchInput,
) -> Result<Output, ToolError> {
    let query = input.query.trim();
    if query.chars().count() < 2 {
        return Err(ToolError::invalid_input(
            "`query` must be at least 2 characters long. Give the words to search for.",
        ));
    }
    let allowed = domains(input.allowed_domains.as_deref())?;
    let blocked = domains(input.blocked_domains.as_deref())?;
    let request = config.request(query, &allowed, &blocked);
    let response = send(&request).map_err(|err| failure(config, &err))?;
    if response.status != 200 {
        return Err(status_error(config, &response));
    }
    let found = config.parse(&response.body)?;
    let total = found.len();
    let results: Vec<SearchResult> = found
        .into_iter()
        .filter(|r| keep(&r.url, &allowed, &blocked))
        .collect();
    Ok(render(config, query, &results, total - results.len()))
}

/// Domains as the model gave them, reduced to host names: `https://`,
/// paths, `*.` and a leading `www.` are dropped.
fn domains(list: Option<&[String]>) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for raw in list.unwrap_or_default() {
        let text = raw.trim().to_ascii_lowercase();
        let text = text
            .split_once("://")
            .map_or(text.as_str(), |(_, rest)| rest);
        let host = text.split(['/', '?', '#']).next().unwrap_or_default();
        let host = host.trim_start_matches("*.").trim_start_matches('.');
        let host = host.strip_prefix("www.").unwrap_or(host);
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(ToolError::invalid_input(format!(
                "`{raw}` is not a domain. Give domains such as \"docs.rs\" or \"example.com\"."
            )));
        }
        if !out.iter().any(|d| d == host) {
            out.push(host.to_owned());
        }
    }
    Ok(out)
}

/// True when the result's host passes the filters.
fn keep(url: &str, allowed: &[String], blocked: &[String]) -> bool {
    let Some(host) = Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return allowed.is_empty();
    };
    let within = |domain: &String| {
        host == *domain
            || host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.ends_with('.'))
    };
    (allowed.is_empty() || allowed.iter().any(within)) && !blocked.iter().any(within)
}

fn render(config: &Config, query: &str, results: &[SearchResult], filtered: usize) -> Output {
    let label = config.provider.label();
    let dropped = if filtered > 0 {
        format!(", {filtered} more left out by the domain filters")
    } else {
        String::new()
    };
    let mut out = if results.is_empty() {
        format!(
            "No results for \"{query}\" ({label}{dropped}). Try other or fewer words{}.\n",
            if filtered > 0 {
                ", or wider domain filters"
            } else {
                ""
            }
        )
    } else {
        format!(
            "Web search results for \"{query}\" ({label}: {} result{}{dropped}):\n",
            results.len(),
            if results.len() == 1 { "" } else { "s" }
        )
    };
    for (n, result) in results.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}\n   {}\n",
            n + 1,
            result.title,
            result.url
        ));
        if !result.snippet.is_empty() {
            out.push_str(&format!("   {}\n", result.snippet));
        }
    }
    if !results.is_empty() {
        out.push_str(
            "\nCite the sources you use with their URLs. To read a result in full, fetch it \
             with WebFetch.\n",
        );
    }
    let listed: Vec<_> = results
        .iter()
        .map(|r| json!({"title": r.title, "url": r.url}))
        .collect();
    Output::text(out).with_metadata(json!({
        "provider": label,
        "query": query,
        "results": listed,
        "filtered_out": filtered,
    }))
}

/// An error for a request that got no response.
fn failure(config: &Config, err: &HttpError) -> ToolError {
    let label = config.provider.label();
    let base = &config.base;
    let host = base.host_str().unwrap_or_default();
    match err.kind {
        HttpErrorKind::Refused | HttpErrorKind::AddressProhibited => {
            ToolError::permission_denied(format!(
                "WebSearch may not reach the search provider at {base}: {}. Do not retry; tell \
                 the user. The operator allows it by adding \"{}://{host}\" to `http` under \
                 [grants.websearch] in kaizen.toml or $KAIZEN_HOME/config.toml.",
                err.message,
                base.scheme()
            ))
        }
        HttpErrorKind::Timeout => ToolError::timeout(format!(
            "The search provider ({label}) did not answer in time: {}. Try again later.",
            err.message
        )),
        _ => ToolError::failed(format!(
            "The search provider ({label}) at {base} could not be reached: {}. Try again \
             later; if it persists, tell the user.",
            err.message
        )),
    }
}

/// The error for a response other than 200, quoting its start.
fn status_error(config: &Config, response: &Response) -> ToolError {
    let provider = config.provider;
    let label = provider.label();
    let status = response.status;
    let advice = match status {
        401 | 403 => format!(
            "The provider did not accept the request's API key (it is missing or wrong). Do \
             not retry; tell the user: the operator sets {} in kaizen's environment (the host \
             adds it to requests for {}).",
            provider.key_env(),
            config.base.host_str().unwrap_or_default()
        ),
        429 => "The provider is rate-limiting searches or the plan's quota is used up. Wait \
                before searching again."
            .into(),
        500..=599 => "The provider failed. Try again later.".into(),
        _ => "The query may be malformed for this provider; try simpler words.".into(),
    };
    let body = String::from_utf8_lossy(&response.body);
    let body = body.trim();
    let excerpt: String = body.chars().take(ERROR_EXCERPT_CHARS).collect();
    let mut message = format!("The search provider ({label}) answered HTTP {status}. {advice}");
    if !excerpt.is_empty() {
        message.push_str("\nIt said: ");
        message.push_str(&excerpt);
        if excerpt.len() < body.len() {
            message.push_str(" [...]");
        }
    }
    ToolError::failed(message)
}

#[cfg(test)]
mod tests;
