//! The HTTP client remote MCP servers are reached with: rustls with the
//! `ring` provider and the Mozilla roots (like the model providers'
//! client), no proxy from the environment, and no redirects: the server
//! is where the user's config says, and the token goes nowhere else.

use std::sync::Arc;

/// A client for remote MCP servers.
pub(crate) fn client() -> Result<reqwest13::Client, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("setting up TLS: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest13::Client::builder()
        .tls_backend_preconfigured(tls)
        .no_proxy()
        .redirect(reqwest13::redirect::Policy::none())
        .build()
        .map_err(|e| format!("setting up the HTTP client: {e}"))
}
