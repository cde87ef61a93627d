//! `kaizen mcp serve --http`: the same server over MCP's streamable HTTP
//! transport, one kaizen session per MCP session, with the protections a
//! local server needs: loopback only unless a token guards it, the `Host`
//! and `Origin` of every request checked (DNS rebinding), and an optional
//! bearer token.

use crate::server::ToolServer;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tower_service::Service as _;

/// How the HTTP server listens and whom it serves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen: a loopback address unless `bearer` is set.
    pub addr: SocketAddr,
    /// When set, every request must carry `Authorization: Bearer <it>`.
    pub bearer: Option<String>,
}

/// The browser origins a local server accepts: its own machine's.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Serves MCP over streamable HTTP at `/mcp` until the process ends; each
/// MCP session gets the server `session` makes.
pub async fn serve_http(
    session: impl Fn() -> ToolServer + Send + Sync + 'static,
    options: HttpOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    if !options.addr.ip().is_loopback() && options.bearer.is_none() {
        anyhow::bail!(
            "{} is not a loopback address: serving kaizen's tools beyond this machine needs a \
             bearer token ([mcp] serve-token-env in $KAIZEN_HOME/config.toml)",
            options.addr
        );
    }
    let mut config = StreamableHttpServerConfig::default();
    config.allowed_origins = LOOPBACK_ORIGINS.iter().map(|o| o.to_string()).collect();
    if !options.addr.ip().is_loopback() {
        config.allowed_hosts = vec![options.addr.ip().to_string(), options.addr.to_string()];
    }
    let service = StreamableHttpService::new(
        move || Ok(session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    ready(listener.local_addr()?);
    let bearer: Option<Arc<str>> = options.bearer.map(Into::into);
    loop {
        let (stream, _) = listener.accept().await?;
        // A response goes out in pieces (headers, an event, the end of the
        // stream): without this, Nagle's algorithm holds the last piece
        // until the client's delayed ACK, 40 ms later.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY on an MCP connection: {err}");
        }
        let service = service.clone();
        let bearer = bearer.clone();
        tokio::spawn(async move {
            let handle = service_fn(move |request: Request<Incoming>| {
                let mut service = service.clone();
                let bearer = bearer.clone();
                async move {
                    if !authorized(&request, bearer.as_deref()) {
                        return Ok::<_, Infallible>(refused());
                    }
                    if request.uri().path() != "/mcp" {
                        return Ok(plain(StatusCode::NOT_FOUND, "kaizen serves MCP at /mcp\n"));
                    }
                    service.call(request).await
                }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), handle);
            if let Err(err) = connection.await {
                tracing::debug!("an MCP HTTP connection ended: {err}");
            }
        });
    }
}

/// Whether `request` carries the token, when one is required. The
/// comparison takes the same time wherever the bytes differ.
fn authorized<B>(request: &Request<B>, bearer: Option<&str>) -> bool {
    let Some(token) = bearer else {
        return true;
    };
    let given = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refused() -> Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        "this kaizen MCP server needs Authorization: Bearer <token>\n",
    );
    response.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static("Bearer"),
    );
    response
}

fn plain(
    status: StatusCode,
    text: &'static str,
) -> Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(auth: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().uri("/mcp");
        if let Some(auth) = auth {
            builder = builder.header("authorization", auth);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn the_token_must_match_exactly() {
        assert!(authorized(&request(None), None));
        assert!(authorized(&request(Some("Bearer s3cret")), Some("s3cret")));
        assert!(!authorized(&request(None), Some("s3cret")));
        assert!(!authorized(&request(Some("Bearer s3cre")), Some("s3cret")));
        assert!(!authorized(
            &request(Some("Bearer s3cretX")),
            Some("s3cret")
        ));
        assert!(!authorized(&request(Some("Basic s3cret")), Some("s3cret")));
    }
}
