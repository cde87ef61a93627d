//! One fetch: the GET through `wasi:http`, redirects followed while they
//! stay on the same site, statuses turned into errors the model can act
//! on, and the body turned into text.

use std::time::Duration;

use kaizen_sdk::ToolError;
use kaizen_sdk::http::{HttpError, HttpErrorKind, Request, Response};
use url::Url;

use crate::content::{self, Kind};
use crate::target::{self, Grant};

/// Redirects followed within one site before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// The most of a body that is downloaded; the rest is cut with a note.
pub const MAX_DOWNLOAD: usize = 10 << 20;

/// How much of an error page is quoted.
const ERROR_EXCERPT_CHARS: usize = 1000;

/// Sends one request; `kaizen_sdk::http::send` in the plugin, a scripted
/// server in the unit tests.
pub type Send<'a> = &'a mut dyn FnMut(&Request) -> Result<Response, HttpError>;

/// A page that was fetched and turned into text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Where it was fetched from, after same-site redirects.
    pub url: Url,
    /// The response status.
    pub status: u16,
    /// The media type the server gave (or `unknown`).
    pub media_type: String,
    /// True when it was HTML, converted to Markdown.
    pub converted: bool,
    /// Bytes downloaded.
    pub bytes: usize,
    /// True when the download was cut at [`MAX_DOWNLOAD`].
    pub cut: bool,
    /// The text: Markdown for HTML, else the body itself.
    pub text: String,
}

/// What a fetch came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The page.
    Page(Page),
    /// A redirect to another site, which is reported, not followed.
    Redirect {
        /// The URL that redirected.
        from: Url,
        /// Where it pointed.
        to: Url,
        /// The redirect's status.
        status: u16,
    },
}

/// Fetches `url` (already upgraded) within `grant`.
pub fn fetch(send: Send<'_>, url: Url, grant: Option<&Grant>) -> Result<Outcome, ToolError> {
    let mut current = url;
    let mut hops = 0;
    loop {
        check_grant(&current, grant)?;
        let response = send(&request(&current)).map_err(|err| failure(&current, &err))?;
        let status = response.status;
        if (300..400).contains(&status) {
            let Some(location) = response.header("location") else {
                return Err(ToolError::failed(format!(
                    "{current} answered {} without saying where to (no Location header). The \
                     page cannot be fetched; try another URL.",
                    status_text(status)
                )));
            };
            let next = current.join(location.trim()).map_err(|err| {
                ToolError::failed(format!(
                    "{current} redirects to `{location}`, which is not a valid URL ({err}). The \
                     page cannot be fetched; try another URL."
                ))
            })?;
            if !target::same_site(&current, &next) {
                return Ok(Outcome::Redirect {
                    from: current,
                    to: next,
                    status,
                });
            }
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(ToolError::failed(format!(
                    "{current} redirected more than {MAX_REDIRECTS} times in a row (last to \
                     {next}). The site is probably in a redirect loop; try another URL."
                )));
            }
            current = next;
            continue;
        }
        if status >= 400 {
            return Err(status_error(&current, &response));
        }
        return page(current, response).map(Outcome::Page);
    }
}

fn request(url: &Url) -> Request {
    Request::get(url.as_str())
        .header(
            "accept",
            "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.7, */*;q=0.5",
        )
        .header("user-agent", "Kaizen-WebFetch/0.1")
        .max_body(MAX_DOWNLOAD)
        .timeouts(
            Duration::from_secs(10),
            Duration::from_secs(20),
            Duration::from_secs(10),
        )
}

/// The text of a successful response; binary content is refused.
fn page(url: Url, response: Response) -> Result<Page, ToolError> {
    let content_type = response.header("content-type");
    let kind = content::classify(content_type, &response.body);
    if let Kind::Binary(media) = &kind {
        return Err(ToolError::invalid_input(format!(
            "{url} is binary content ({media}, {}{}), which WebFetch cannot show: it returns \
             text only (HTML as Markdown, plain text, JSON, XML, ...). Look for an HTML or text \
             version of this content instead.",
            human_size(response.body.len()),
            if response.truncated { " or more" } else { "" }
        )));
    }
    let media_type = content_type
        .map(content::media_type)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "unknown".into());
    Ok(Page {
        status: response.status,
        media_type,
        converted: kind == Kind::Html,
        bytes: response.body.len(),
        cut: response.truncated,
        text: content::to_text(&kind, &response.body),
        url,
    })
}

fn check_grant(url: &Url, grant: Option<&Grant>) -> Result<(), ToolError> {
    let Some(grant) = grant else {
        return Ok(());
    };
    let host = target::host_of(url);
    if grant.allows(url.scheme(), &host, target::port_of(url)) {
        return Ok(());
    }
    Err(ToolError::permission_denied(format!(
        "WebFetch may not fetch {url}: {} is not among the hosts the operator allowed it to \
         reach (allowed: {}). Do not retry this URL. Tell the user; they can allow the host by \
         adding \"{host}\" to `http` under [grants.webfetch] in kaizen.toml or \
         $KAIZEN_HOME/config.toml.",
        authority(url),
        grant.describe()
    )))
}

/// An error for a request that got no response.
fn failure(url: &Url, err: &HttpError) -> ToolError {
    let host = authority(url);
    match err.kind {
        HttpErrorKind::Refused => ToolError::permission_denied(format!(
            "WebFetch may not fetch {url}: the host refused the request because {host} is not \
             in the plugin's network grant. Do not retry this URL. Tell the user; they can \
             allow the host by adding \"{}\" to `http` under [grants.webfetch] in kaizen.toml \
             or $KAIZEN_HOME/config.toml.",
            target::host_of(url)
        )),
        HttpErrorKind::AddressProhibited => ToolError::permission_denied(format!(
            "WebFetch may not fetch {url}: {host} is a loopback or private-network address, \
             which plugins may reach only when the operator's grant names that host exactly. \
             Tell the user if you meant a local server; they can allow it by adding \
             \"{}://{host}\" to `http` under [grants.webfetch] (keep \"*\" in the list for \
             public sites).",
            url.scheme()
        )),
        HttpErrorKind::DnsFailed => ToolError::not_found(format!(
            "Could not fetch {url}: the host name {host} could not be resolved. Check the URL \
             for typos; the site may not exist."
        )),
        HttpErrorKind::ConnectionFailed => ToolError::failed(format!(
            "Could not fetch {url}: {}. The server may be down; try again later or use \
             another source.",
            err.message
        )),
        HttpErrorKind::Timeout => ToolError::timeout(format!(
            "Could not fetch {url}: {}. Try again later or use another source.",
            err.message
        )),
        HttpErrorKind::Tls => ToolError::failed(format!(
            "Could not fetch {url}: {}. WebFetch fetches http:// URLs over https://, so a site \
             without working TLS cannot be fetched; use another source.",
            err.message
        )),
        HttpErrorKind::InvalidRequest | HttpErrorKind::Other => {
            ToolError::failed(format!("Could not fetch {url}: {}.", err.message))
        }
    }
}

/// The error for a 4xx or 5xx response, quoting the start of its body.
fn status_error(url: &Url, response: &Response) -> ToolError {
    let status = response.status;
    let advice = match status {
        401 | 403 => {
            "The site refused access; WebFetch cannot log in or pass checks for robots. Use \
             another source."
        }
        404 | 410 => {
            "The page does not exist (any more). Check the URL, or search for where the \
             content moved."
        }
        429 => {
            "The site is rate-limiting requests. Wait before trying again, or use another source."
        }
        500..=599 => "The server failed. Try again later or use another source.",
        _ => "Check the URL.",
    };
    let mut message = format!("{url} returned HTTP {}. {advice}", status_text(status));
    let kind = content::classify(response.header("content-type"), &response.body);
    if !matches!(kind, Kind::Binary(_)) {
        let text = content::to_text(&kind, &response.body);
        let (excerpt, cut) = content::truncate(text.trim(), ERROR_EXCERPT_CHARS);
        if !excerpt.is_empty() {
            message.push_str("\nThe response said:\n");
            message.push_str(excerpt);
            if cut.is_some() {
                message.push_str("\n[...]");
            }
        }
    }
    if status == 404 || status == 410 {
        ToolError::not_found(message)
    } else {
        ToolError::failed(message)
    }
}

/// `404 Not Found`, or the bare code for codes without a common phrase.
pub fn status_text(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        410 => "Gone",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    };
    if reason.is_empty() {
        status.to_string()
    } else {
        format!("{status} {reason}")
    }
}

/// `host` or `host:port` as the URL gives it.
fn authority(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        _ => url.as_str().to_owned(),
    }
}

/// A byte count for people: `512 bytes`, `12.5 KB`, `3.1 MB`.
pub fn human_size(bytes: usize) -> String {
    let size = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if size < 1024.0 * 1024.0 {
        format!("{:.1} KB", size / 1024.0)
    } else {
        format!("{:.1} MB", size / (1024.0 * 1024.0))
    }
}
