//! Outbound HTTP through `wasi:http`, blocking and bounded.
//!
//! Every request passes the host's allow-list: the plugin's manifest
//! requests hosts (`http = ["api.example.com"]`), the operator grants them,
//! and a request outside the effective grant fails with
//! [`HttpErrorKind::Refused`] before any connection is made. The host may
//! add headers of its own on the way out (the operator's credentials for a
//! host, which the plugin never sees).
//!
//! Bodies are read up to [`Request::max_body`] bytes; a longer body is cut
//! there and the response says so ([`Response::truncated`]), so a huge
//! download cannot exhaust the plugin's memory.
//!
//! ```no_run
//! use kaizen_sdk::http::{Request, send};
//!
//! let response = send(&Request::get("https://api.example.com/v1/items").header("accept", "application/json"));
//! ```
//!
//! The host tells a plugin which hosts it may reach in the environment
//! variable [`ALLOW_ENV`], so a tool can explain a refusal before trying.

use std::time::Duration;

use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

/// The environment variable in which the host lists the plugin's
/// effective HTTP grant: patterns (`host`, `*.domain`, `*`, each with an
/// optional `scheme://` and `:port`) separated by spaces. Unset when the
/// plugin has no HTTP grant.
pub const ALLOW_ENV: &str = "KAIZEN_HTTP_ALLOW";

/// Bytes read from a response body unless [`Request::max_body`] says
/// otherwise.
pub const DEFAULT_MAX_BODY: usize = 10 << 20;

/// The size of one read from the body stream.
const CHUNK: u64 = 64 << 10;

/// One outgoing request. Build it with [`Request::get`] or
/// [`Request::post`] and the chained setters.
#[derive(Debug, Clone)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    max_body: usize,
    connect_timeout: Duration,
    first_byte_timeout: Duration,
    between_bytes_timeout: Duration,
}

impl Request {
    /// A request with `method` (`GET`, `POST`, ...) for an absolute
    /// `http://` or `https://` URL.
    pub fn new(method: &str, url: impl Into<String>) -> Self {
        Self {
            method: method.to_ascii_uppercase(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            max_body: DEFAULT_MAX_BODY,
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(30),
            between_bytes_timeout: Duration::from_secs(15),
        }
    }

    /// A `GET` request.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new("GET", url)
    }

    /// A `POST` request with `body`.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        Self::new("POST", url).body(body)
    }

    /// Adds a header (several with one name are all sent).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Reads at most `bytes` of the response body (default
    /// [`DEFAULT_MAX_BODY`]).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long to wait for the connection (default 10 s), for the first
    /// byte of the response (30 s) and between two reads (15 s). The host's
    /// limit on the whole call applies as well.
    pub fn timeouts(mut self, connect: Duration, first_byte: Duration, between: Duration) -> Self {
        self.connect_timeout = connect;
        self.first_byte_timeout = first_byte;
        self.between_bytes_timeout = between;
        self
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers set so far.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The body, if any.
    pub fn body_bytes(&self) -> Option<&[u8]> {
        self.body.as_deref()
    }

    /// The body limit.
    pub fn body_limit(&self) -> usize {
        self.max_body
    }
}

/// A response, its body read up to the request's limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, at most the request's `max_body` bytes.
    pub body: Vec<u8>,
    /// True when the body went on past the limit and was cut.
    pub truncated: bool,
}

impl Response {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// What kind of failure an [`HttpError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpErrorKind {
    /// The URL or a header could not be used.
    InvalidRequest,
    /// The host's allow-list refused the request: the host is not in the
    /// plugin's grant.
    Refused,
    /// The name resolved to a loopback or private address, which the grant
    /// does not open (only a grant naming the host exactly does).
    AddressProhibited,
    /// The name could not be resolved.
    DnsFailed,
    /// No connection could be made, or it broke.
    ConnectionFailed,
    /// The server took too long.
    Timeout,
    /// TLS failed (certificate, protocol).
    Tls,
    /// Anything else the HTTP layer reported.
    Other,
}

/// A request that got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// What kind of failure.
    pub kind: HttpErrorKind,
    /// What the HTTP layer said, for people.
    pub message: String,
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HttpError {}

impl HttpError {
    fn new(kind: HttpErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// Sends `request` and reads the response; blocks until it is in.
pub fn send(request: &Request) -> Result<Response, HttpError> {
    let (scheme, authority, path) = split_url(&request.url)?;
    let invalid = |what: &str| {
        HttpError::new(
            HttpErrorKind::InvalidRequest,
            format!("invalid {what} in {}", request.url),
        )
    };
    let fields = Fields::new();
    for (name, value) in &request.headers {
        fields
            .append(&name.to_ascii_lowercase(), value.as_bytes())
            .map_err(|_| invalid(&format!("header `{name}`")))?;
    }
    let outgoing = OutgoingRequest::new(fields);
    outgoing
        .set_method(&method(&request.method))
        .map_err(|()| invalid("method"))?;
    outgoing
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("scheme"))?;
    outgoing
        .set_authority(Some(authority))
        .map_err(|()| invalid("host"))?;
    outgoing
        .set_path_with_query(Some(path))
        .map_err(|()| invalid("path"))?;
    let body = outgoing.body().map_err(|()| invalid("body"))?;
    let options = RequestOptions::new();
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    // A host that does not support a timeout keeps its own.
    let _ = options.set_connect_timeout(Some(nanos(request.connect_timeout)));
    let _ = options.set_first_byte_timeout(Some(nanos(request.first_byte_timeout)));
    let _ = options.set_between_bytes_timeout(Some(nanos(request.between_bytes_timeout)));

    let pending = outgoing_handler::handle(outgoing, Some(options)).map_err(|c| error_of(&c))?;
    write_body(body, request.body.as_deref().unwrap_or_default())?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(error_of(&code)),
        Some(Err(())) | None => {
            return Err(HttpError::new(
                HttpErrorKind::Other,
                "the host gave no response",
            ));
        }
    };
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| {
            (
                name.to_ascii_lowercase(),
                String::from_utf8_lossy(&value).into_owned(),
            )
        })
        .collect();
    let incoming = response
        .consume()
        .map_err(|()| HttpError::new(HttpErrorKind::Other, "the response body was taken"))?;
    let (body, truncated) = read_body(&incoming, request.max_body)?;
    // Finishing a body that was cut would wait for the rest of it.
    if !truncated {
        drop(IncomingBody::finish(incoming));
    }
    Ok(Response {
        status,
        headers,
        body,
        truncated,
    })
}

fn method(name: &str) -> Method {
    match name {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "CONNECT" => Method::Connect,
        "OPTIONS" => Method::Options,
        "TRACE" => Method::Trace,
        "PATCH" => Method::Patch,
        other => Method::Other(other.to_owned()),
    }
}

/// Splits `scheme://authority/path?query` (the fragment is dropped).
fn split_url(url: &str) -> Result<(Scheme, &str, &str), HttpError> {
    let bad = || {
        HttpError::new(
            HttpErrorKind::InvalidRequest,
            format!("`{url}` is not an absolute http:// or https:// URL"),
        )
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        _ => return Err(bad()),
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    if authority.is_empty() {
        return Err(bad());
    }
    Ok((scheme, authority, if path.is_empty() { "/" } else { path }))
}

fn write_body(body: OutgoingBody, bytes: &[u8]) -> Result<(), HttpError> {
    let broken = |what: String| HttpError::new(HttpErrorKind::ConnectionFailed, what);
    {
        let stream = body
            .write()
            .map_err(|()| broken("the request body could not be opened".into()))?;
        for chunk in bytes.chunks(4096) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|err| broken(format!("sending the request body failed: {err:?}")))?;
        }
    }
    OutgoingBody::finish(body, None).map_err(|code| error_of(&code))
}

fn read_body(body: &IncomingBody, limit: usize) -> Result<(Vec<u8>, bool), HttpError> {
    let stream = body
        .stream()
        .map_err(|()| HttpError::new(HttpErrorKind::Other, "the response had no body stream"))?;
    let mut bytes = Vec::new();
    loop {
        // One byte past the limit tells a cut body from one that fits.
        let want = (limit.saturating_add(1) - bytes.len()).min(CHUNK as usize) as u64;
        match stream.blocking_read(want) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok((bytes, false)),
            Err(StreamError::LastOperationFailed(err)) => {
                return Err(match wasip2::http::types::http_error_code(&err) {
                    Some(code) => error_of(&code),
                    None => HttpError::new(
                        HttpErrorKind::ConnectionFailed,
                        format!("reading the response failed: {}", err.to_debug_string()),
                    ),
                });
            }
        }
        if bytes.len() > limit {
            bytes.truncate(limit);
            return Ok((bytes, true));
        }
    }
}

/// A readable error for a `wasi:http` error code.
fn error_of(code: &ErrorCode) -> HttpError {
    use HttpErrorKind as K;
    let (kind, message) = match code {
        ErrorCode::HttpRequestDenied => (
            K::Refused,
            "the host refused the request: this host is not in the plugin's http grant".into(),
        ),
        ErrorCode::DestinationIpProhibited => (
            K::AddressProhibited,
            "the host refused the request: the name resolves to a loopback or private address, which the plugin may reach only when its grant names the host exactly".into(),
        ),
        ErrorCode::DnsTimeout | ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            (K::DnsFailed, "the host name could not be resolved".into())
        }
        ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpUnroutable
        | ErrorCode::ConnectionRefused
        | ErrorCode::ConnectionTerminated
        | ErrorCode::ConnectionLimitReached => (
            K::ConnectionFailed,
            format!("the connection failed ({code:?})"),
        ),
        ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => {
            (K::Timeout, format!("the server did not answer in time ({code:?})"))
        }
        ErrorCode::TlsProtocolError
        | ErrorCode::TlsCertificateError
        | ErrorCode::TlsAlertReceived(_) => (K::Tls, format!("TLS failed ({code:?})")),
        ErrorCode::HttpRequestUriInvalid | ErrorCode::HttpRequestMethodInvalid => {
            (K::InvalidRequest, format!("the request is invalid ({code:?})"))
        }
        other => (K::Other, format!("the HTTP request failed ({other:?})")),
    };
    HttpError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_scheme_authority_and_path() {
        let (scheme, authority, path) = split_url("https://Example.com:8443/a/b?q=1#frag").unwrap();
        assert!(matches!(scheme, Scheme::Https));
        assert_eq!((authority, path), ("Example.com:8443", "/a/b?q=1"));
        let (_, authority, path) = split_url("http://x.org?q").unwrap();
        assert_eq!((authority, path), ("x.org", "?q"));
        let (_, _, path) = split_url("http://x.org").unwrap();
        assert_eq!(path, "/");
        for bad in ["x.org/a", "ftp://x.org/", "http:///path"] {
            assert_eq!(
                split_url(bad).err().map(|e| e.kind),
                Some(HttpErrorKind::InvalidRequest),
                "{bad}"
            );
        }
    }

    #[test]
    fn responses_find_headers_case_insensitively() {
        let response = Response {
            status: 200,
            headers: vec![("content-type".into(), "text/html".into())],
            ..Response::default()
        };
        assert_eq!(response.header("Content-Type"), Some("text/html"));
        assert_eq!(response.header("location"), None);
    }
}
