//! `webfetch`: the built-in `WebFetch` tool, which fetches a URL the way
//! Claude Code's tool of the same name does.
//!
//! - Through `wasi:http` only, so the host's allow-list applies: the
//!   manifest requests `http = ["*"]`, the operator's grant narrows it (the
//!   built-in default grant is `*`: public hosts; loopback and private
//!   addresses only when a grant names them exactly). A host outside the
//!   grant is refused with a message saying how the user can allow it.
//! - `http://` is upgraded to `https://`, except for loopback hosts and
//!   hosts granted with an explicit `http://` scheme (see
//!   [`target::upgrade`]).
//! - Redirects are followed while they stay on the same host (at most
//!   five); a redirect to another host is reported with its target, for the
//!   model to fetch if it wants.
//! - At most 10 MB is downloaded (a note says when the page was cut); HTML
//!   becomes Markdown (`htmd`), other text is returned as it is, binary
//!   content is refused.
//! - Pages are cached per URL for 15 minutes in the session's instance
//!   ([`cache`]).
//! - The `prompt` would be answered by a model over the page; the contract
//!   has no model import yet, so the Markdown (cut at 100,000 characters,
//!   with a note) is returned with the prompt for the calling model to
//!   answer.
//!
//! The logic is plain Rust over a `send` function and is tested natively
//! with a scripted one: `cargo test --manifest-path plugins/Cargo.toml`.

mod cache;
mod content;
mod fetch;
mod target;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use kaizen_sdk::prelude::*;
use url::Url;

use crate::cache::Cache;
use crate::fetch::{Outcome, Page, Send};
use crate::target::Grant;

/// The most characters of page text returned to the model.
const MAX_CONTENT_CHARS: usize = 100_000;

/// The session's pages (one instance per session: the plugin is stateful).
static CACHE: Mutex<Cache> = Mutex::new(Cache::new());

/// Input of `WebFetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct WebFetchInput {
    /// The URL to fetch content from (a fully-formed http:// or https:// URL).
    url: String,
    /// What you want to learn from the page: the question to answer or the information to extract.
    prompt: String,
}

/// The `WebFetch` tool.
struct WebFetch;

impl Tool for WebFetch {
    const NAME: &'static str = "WebFetch";
    const DESCRIPTION: &'static str = "\
Fetches content from a URL and returns it as Markdown, together with your prompt, so that you \
can answer the prompt from the page.
- Takes a URL and a prompt as input.
- Fetches the URL and converts HTML to Markdown; plain text, JSON and other text come back as \
they are. Binary content (images, PDFs, archives) is refused.
- Use this tool when you need to retrieve and analyze web content.

Usage notes:
- The URL must be a fully-formed valid URL.
- HTTP URLs are automatically upgraded to HTTPS (local servers on localhost excepted).
- The prompt should describe what information you want to extract from the page.
- This tool is read-only and does not modify any files.
- Long pages are cut at 100,000 characters, with a note.
- A page fetched in the last 15 minutes is served from a cache, which makes repeated access \
to the same URL fast.
- When a URL redirects to a different host, the tool tells you the redirect URL instead of \
following it. Make a new WebFetch request with that URL to fetch its content.
- Only hosts the operator allowed can be reached; a refusal says so. Do not retry a refused \
host.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Dangerous;
    type Input = WebFetchInput;

    fn call(_ctx: &CallContext, input: WebFetchInput) -> Result<Output, ToolError> {
        let grant = Grant::from_env();
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let mut send = kaizen_sdk::http::send;
        web_fetch(
            &mut send,
            &mut cache,
            grant.as_ref(),
            &input,
            Instant::now(),
        )
    }
}

export_tools!(WebFetch);

/// The whole tool: the cache, else a fetch through `send`.
fn web_fetch(
    send: Send<'_>,
    cache: &mut Cache,
    grant: Option<&Grant>,
    input: &WebFetchInput,
    now: Instant,
) -> Result<Output, ToolError> {
    if input.prompt.trim().is_empty() {
        return Err(ToolError::invalid_input(
            "`prompt` is empty. Say what you want to learn from the page, e.g. \"What does it \
             say about installation?\" or \"Summarize the page\".",
        ));
    }
    let requested = target::parse_url(&input.url)?;
    let url = target::upgrade(requested.clone(), grant);
    let key = url.to_string();
    if let Some((page, fetched)) = cache.get(&key, now) {
        let age = now.saturating_duration_since(fetched);
        return Ok(render(&requested, &url, &page, &input.prompt, Some(age)));
    }
    match fetch::fetch(send, url.clone(), grant)? {
        Outcome::Page(page) => {
            let output = render(&requested, &url, &page, &input.prompt, None);
            cache.put(key, page, now);
            Ok(output)
        }
        Outcome::Redirect { from, to, status } => Ok(redirect(&from, &to, status, &input.prompt)),
    }
}

/// The result for a page: what was fetched, the prompt, the text.
fn render(
    requested: &Url,
    url: &Url,
    page: &Page,
    prompt: &str,
    cached: Option<Duration>,
) -> Output {
    let mut out = format!("URL: {}\n", page.url);
    if requested.scheme() == "http" && url.scheme() == "https" {
        out.push_str(&format!(
            "Fetched over https: {requested} was upgraded to {url}.\n"
        ));
    }
    if page.url != *url {
        out.push_str(&format!("Redirected within the site from {url}.\n"));
    }
    out.push_str(&format!(
        "Status: {} · {} · {}{}\n",
        fetch::status_text(page.status),
        page.media_type,
        fetch::human_size(page.bytes),
        if page.converted {
            " · converted to Markdown"
        } else {
            ""
        }
    ));
    if let Some(age) = cached {
        out.push_str(&format!(
            "Served from the cache: fetched {} ago (pages are kept for 15 minutes).\n",
            minutes(age)
        ));
    }
    if page.cut {
        out.push_str(&format!(
            "Note: the download was cut at {}; what follows is only the start of the page.\n",
            fetch::human_size(fetch::MAX_DOWNLOAD)
        ));
    }
    out.push_str(&format!(
        "\nPrompt: {prompt}\n\nWebFetch has no model of its own to answer the prompt with, so \
         the page's content follows{}. Answer the prompt from it.\n\n",
        if page.converted { " as Markdown" } else { "" }
    ));
    let (text, total) = content::truncate(&page.text, MAX_CONTENT_CHARS);
    out.push_str("--- content ---\n");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("--- end of content ---\n");
    if let Some(total) = total {
        out.push_str(&format!(
            "[The content was cut at {} of {total} characters. Answer from this part, or fetch a \
             more specific page of the site.]\n",
            text.chars().count()
        ));
    }
    Output::text(out).with_metadata(json!({
        "url": page.url.as_str(),
        "requested_url": requested.as_str(),
        "status": page.status,
        "content_type": page.media_type,
        "bytes": page.bytes,
        "download_cut": page.cut,
        "markdown": page.converted,
        "cached": cached.is_some(),
        "truncated": total.is_some(),
    }))
}

/// The result for a redirect to another host.
fn redirect(from: &Url, to: &Url, status: u16, prompt: &str) -> Output {
    let text = format!(
        "REDIRECT DETECTED: {from} redirects to a different host.\n\
         Original URL: {from}\n\
         Redirect URL: {to}\n\
         Status: {}\n\n\
         WebFetch follows redirects only within the same host. To fetch the content, call \
         WebFetch again with url \"{to}\" and the same prompt ({prompt:?}).",
        fetch::status_text(status)
    );
    Output::text(text).with_metadata(json!({
        "url": from.as_str(),
        "redirect_url": to.as_str(),
        "status": status,
    }))
}

/// `less than a minute`, `1 minute`, `12 minutes`.
fn minutes(age: Duration) -> String {
    match age.as_secs() / 60 {
        0 => "less than a minute".into(),
        1 => "1 minute".into(),
        n => format!("{n} minutes"),
    }
}

#[cfg(test)]
mod tests;
