//! The HTTP client remote MCP servers are reached with: Kaizen's TLS
//! ([`kaizen_llm::http_client`]), no proxy from the environment, and no
//! redirects: the server is where the user's config says, and the token
//! goes nowhere else.

/// A client for remote MCP servers.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    kaizen_llm::http_client()?
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("setting up the HTTP client: {e}"))
}
