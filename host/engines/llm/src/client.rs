//! The HTTP client every remote call starts from: model providers, remote
//! MCP servers and the cluster's server alike. rustls with the `ring`
//! provider and the Mozilla roots, set here once, so that no call depends
//! on a process-wide TLS provider having been installed.

use std::sync::Arc;

/// A client builder with Kaizen's TLS: rustls, `ring`, the Mozilla roots.
/// Callers add what is theirs (a user agent, proxies, redirects).
pub fn http_client() -> Result<reqwest::ClientBuilder, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("setting up TLS: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(reqwest::Client::builder().tls_backend_preconfigured(tls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// The client needs no process-wide TLS provider, and speaks TLS to an
    /// `https` address: the first bytes a server sees are a TLS handshake
    /// record.
    #[tokio::test]
    async fn an_https_call_starts_a_tls_handshake() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut head = [0u8; 3];
            conn.read_exact(&mut head).await.unwrap();
            head
        });
        let client = http_client().unwrap().build().unwrap();
        let sent = client
            .get(format!("https://127.0.0.1:{port}/"))
            .send()
            .await;
        assert!(sent.is_err(), "no TLS server there");
        // Content type 22 (handshake), protocol version 3.x.
        let head = server.await.unwrap();
        assert_eq!(head[..2], [0x16, 0x03]);
    }
}
