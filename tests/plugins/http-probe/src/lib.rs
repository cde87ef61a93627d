//! `http-probe`: one GET through `wasi:http/outgoing-handler`, so that tests
//! can see what the host's HTTP allow-list lets through (and what headers
//! it adds); `ProbeEnv` prints the plugin's environment, so that tests can
//! check what never reaches a plugin.

use std::io::Read;

use kaizen_sdk::prelude::*;
use wasi::http::outgoing_handler;
use wasi::http::types::{ErrorCode, Fields, IncomingBody, Method, OutgoingRequest, Scheme};

/// Input of `Fetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
struct FetchInput {
    /// An absolute `http://` or `https://` URL.
    url: String,
    /// Headers to send, as `[name, value]` pairs.
    #[serde(default)]
    headers: Vec<(String, String)>,
}

struct Fetch;

impl Tool for Fetch {
    const NAME: &'static str = "Fetch";
    const DESCRIPTION: &'static str =
        "GETs a URL and returns `status: <code>` and the body on the next line.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Dangerous;
    type Input = FetchInput;

    fn call(_ctx: &CallContext, input: FetchInput) -> Result<Output, ToolError> {
        let (status, body) = get(&input.url, &input.headers)?;
        Ok(format!("status: {status}\n{}", String::from_utf8_lossy(&body)).into())
    }
}

/// Splits `scheme://authority/path?query`.
fn parse(url: &str) -> Result<(Scheme, &str, &str), ToolError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| ToolError::invalid_input(format!("`{url}` is not an absolute URL")))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_owned()),
    };
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    Ok((scheme, authority, if path.is_empty() { "/" } else { path }))
}

fn get(url: &str, headers: &[(String, String)]) -> Result<(u16, Vec<u8>), ToolError> {
    let (scheme, authority, path) = parse(url)?;
    let fields = Fields::new();
    for (name, value) in headers {
        fields
            .append(name, &value.as_bytes().to_vec())
            .map_err(|err| ToolError::invalid_input(format!("header `{name}`: {err:?}")))?;
    }
    let request = OutgoingRequest::new(fields);
    let invalid = |what: &str| ToolError::invalid_input(format!("invalid {what} in `{url}`"));
    request
        .set_method(&Method::Get)
        .map_err(|()| invalid("method"))?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("scheme"))?;
    request
        .set_authority(Some(authority))
        .map_err(|()| invalid("authority"))?;
    request
        .set_path_with_query(Some(path))
        .map_err(|()| invalid("path"))?;

    let pending = outgoing_handler::handle(request, None).map_err(|code| http_error(url, &code))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(http_error(url, &code)),
        Some(Err(())) | None => {
            return Err(ToolError::failed(format!("GET {url}: no response")));
        }
    };
    let status = response.status();
    let body = response
        .consume()
        .map_err(|()| ToolError::failed(format!("GET {url}: the body was already taken")))?;
    let mut bytes = Vec::new();
    {
        let mut stream = body
            .stream()
            .map_err(|()| ToolError::failed(format!("GET {url}: no body stream")))?;
        stream
            .read_to_end(&mut bytes)
            .map_err(|err| ToolError::failed(format!("GET {url}: reading the body: {err}")))?;
    }
    IncomingBody::finish(body);
    Ok((status, bytes))
}

fn http_error(url: &str, code: &ErrorCode) -> ToolError {
    ToolError::failed(format!("GET {url} failed: {code:?}"))
}

/// Prints `NAME=value` for every variable in the plugin's environment.
struct ProbeEnv;

impl Tool for ProbeEnv {
    const NAME: &'static str = "ProbeEnv";
    const DESCRIPTION: &'static str = "Prints the plugin's environment, one NAME=value a line.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    type Input = NoInput;

    fn call(_ctx: &CallContext, _input: NoInput) -> Result<Output, ToolError> {
        let lines: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
        Ok(lines.join("\n").into())
    }
}

export_tools!(Fetch, ProbeEnv);
