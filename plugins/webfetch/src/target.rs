//! Which URL is fetched: parsing the model's URL, the http → https
//! upgrade, redirects that stay on the same site, and the plugin's HTTP
//! grant as the host reports it (`KAIZEN_HTTP_ALLOW`).

use kaizen_sdk::ToolError;
use url::{Host, Url};

/// The longest URL accepted.
const MAX_URL_LEN: usize = 2000;

/// Parses the model's URL: absolute, `http` or `https`, with a host and
/// without credentials.
pub fn parse_url(text: &str) -> Result<Url, ToolError> {
    let text = text.trim();
    if text.len() > MAX_URL_LEN {
        return Err(ToolError::invalid_input(format!(
            "The URL is {} characters long; WebFetch takes URLs of at most {MAX_URL_LEN} \
             characters. Use a shorter URL for the page.",
            text.len()
        )));
    }
    let url = Url::parse(text).map_err(|err| {
        ToolError::invalid_input(format!(
            "`{text}` is not a valid URL ({err}). Give a fully-formed absolute URL such as \
             https://example.com/page."
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::invalid_input(format!(
            "`{text}` uses the `{}` scheme; WebFetch fetches only http:// and https:// URLs. \
             To read a local file, use Read.",
            url.scheme()
        )));
    }
    if url.host().is_none() {
        return Err(ToolError::invalid_input(format!(
            "`{text}` has no host name. Give a URL such as https://example.com/page."
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::invalid_input(format!(
            "`{text}` contains a user name or password; WebFetch does not send credentials in \
             URLs. Fetch the URL without them."
        )));
    }
    Ok(url)
}

/// The host of `url` as patterns see it: lower-case, IPv6 without
/// brackets.
pub fn host_of(url: &Url) -> String {
    match url.host() {
        Some(Host::Ipv6(addr)) => addr.to_string(),
        Some(host) => host.to_string().to_ascii_lowercase(),
        None => String::new(),
    }
}

/// The port of `url`, the scheme's default when it names none.
pub fn port_of(url: &Url) -> u16 {
    url.port_or_known_default().unwrap_or(443)
}

/// True for loopback hosts: `localhost` (and names under it), 127.0.0.0/8
/// and `::1`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(Host::Ipv4(addr)) => addr.is_loopback(),
        Some(Host::Ipv6(addr)) => addr.is_loopback(),
        None => false,
    }
}

/// Applies the upgrade rule: an `http://` URL is fetched as `https://`,
/// except for loopback hosts (local servers seldom speak TLS, and loopback
/// traffic cannot be overheard) and hosts the operator granted with an
/// explicit `http://` scheme (a grant that says the host speaks plain HTTP).
pub fn upgrade(mut url: Url, grant: Option<&Grant>) -> Url {
    if url.scheme() != "http" || is_loopback(&url) {
        return url;
    }
    if grant.is_some_and(|grant| grant.names_plain_http(&host_of(&url), port_of(&url))) {
        return url;
    }
    let default_port = url.port().is_none_or(|port| port == 80);
    // Both schemes are "special", so the change cannot fail.
    let _ = url.set_scheme("https");
    if default_port {
        let _ = url.set_port(None);
    }
    url
}

/// True when a redirect from `from` to `to` stays on the same site: the
/// same host (a leading `www.` aside) and port, and no downgrade from
/// `https` to `http`.
pub fn same_site(from: &Url, to: &Url) -> bool {
    let strip = |host: String| host.strip_prefix("www.").map(str::to_owned).unwrap_or(host);
    let downgrade = from.scheme() == "https" && to.scheme() == "http";
    let ports_match = port_of(from) == port_of(to)
        || (from.port().is_none() && to.port().is_none() && from.scheme() != to.scheme());
    strip(host_of(from)) == strip(host_of(to)) && ports_match && !downgrade
}

/// The plugin's effective HTTP grant, as the host lists it in
/// `KAIZEN_HTTP_ALLOW`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    patterns: Vec<Pattern>,
}

/// One grant entry: `[scheme://]host[:port]`, host a name, an address,
/// `*.domain` or `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    text: String,
    scheme: Option<String>,
    host: String,
    port: Option<u16>,
}

impl Grant {
    /// The grant the host passed, or `None` when it passed none (a host
    /// that does not report grants; the host's own check still applies).
    pub fn from_env() -> Option<Grant> {
        std::env::var(kaizen_sdk::http::ALLOW_ENV)
            .ok()
            .map(|text| Grant::parse(&text))
    }

    /// Parses the space-separated list; entries that do not parse are
    /// skipped (the host checked them).
    pub fn parse(text: &str) -> Grant {
        let patterns = text.split_whitespace().filter_map(Pattern::parse).collect();
        Grant { patterns }
    }

    /// True when a request to `scheme://host:port` is in the grant.
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> bool {
        self.patterns
            .iter()
            .any(|p| p.scheme.as_deref().is_none_or(|s| s == scheme) && p.matches(host, port))
    }

    /// True when an entry names `host` with an explicit `http://` scheme.
    pub fn names_plain_http(&self, host: &str, port: u16) -> bool {
        self.patterns
            .iter()
            .any(|p| p.scheme.as_deref() == Some("http") && p.host == host && p.matches(host, port))
    }

    /// The entries, for messages.
    pub fn describe(&self) -> String {
        if self.patterns.is_empty() {
            return "none".into();
        }
        let texts: Vec<&str> = self.patterns.iter().map(|p| p.text.as_str()).collect();
        texts.join(", ")
    }
}

impl Pattern {
    fn parse(text: &str) -> Option<Pattern> {
        let (scheme, rest) = match text.split_once("://") {
            Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
            None => (None, text),
        };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (host, after) = v6.split_once(']')?;
            (
                host,
                after.strip_prefix(':').map(str::parse).transpose().ok()?,
            )
        } else {
            match rest.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port.parse().ok()?)),
                _ => (rest, None),
            }
        };
        Some(Pattern {
            text: text.to_owned(),
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        let host_ok = match self.host.strip_prefix("*.") {
            _ if self.host == "*" => true,
            Some(suffix) => host
                .strip_suffix(suffix)
                .is_some_and(|head| head.ends_with('.')),
            None => self.host == host,
        };
        host_ok && self.port.is_none_or(|p| p == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_is_upgraded_except_for_loopback_and_explicit_http_grants() {
        let up = |url: &str, grant: Option<&str>| {
            let grant = grant.map(Grant::parse);
            upgrade(parse_url(url).unwrap(), grant.as_ref()).to_string()
        };
        assert_eq!(
            up("http://example.com/a?b", None),
            "https://example.com/a?b"
        );
        assert_eq!(up("http://example.com:80/", None), "https://example.com/");
        assert_eq!(
            up("http://example.com:8080/", None),
            "https://example.com:8080/"
        );
        assert_eq!(up("https://example.com/", None), "https://example.com/");
        assert_eq!(up("http://127.0.0.1:9/x", None), "http://127.0.0.1:9/x");
        assert_eq!(up("http://localhost:3000/", None), "http://localhost:3000/");
        assert_eq!(up("http://[::1]:3000/", None), "http://[::1]:3000/");
        assert_eq!(
            up(
                "http://intranet.lan:8080/",
                Some("* http://intranet.lan:8080")
            ),
            "http://intranet.lan:8080/"
        );
        // Only an explicit http:// entry for that very host keeps http.
        assert_eq!(
            up("http://intranet.lan/", Some("intranet.lan http://*.lan")),
            "https://intranet.lan/"
        );
    }

    #[test]
    fn grants_match_like_the_host() {
        let grant = Grant::parse("docs.rs *.example.com https://api.x.org:8443 [::1]:80 http://h");
        assert!(grant.allows("https", "docs.rs", 443));
        assert!(grant.allows("https", "a.example.com", 443));
        assert!(!grant.allows("https", "example.com", 443));
        assert!(grant.allows("https", "api.x.org", 8443));
        assert!(!grant.allows("http", "api.x.org", 8443));
        assert!(grant.allows("http", "::1", 80));
        assert!(grant.allows("http", "h", 80));
        assert!(!grant.allows("https", "h", 443));
        assert!(Grant::parse("*").allows("http", "anything", 1));
    }

    #[test]
    fn urls_are_checked() {
        for (url, expect) in [
            ("example.com", "not a valid URL"),
            ("ftp://example.com/", "only http:// and https://"),
            ("file:///etc/passwd", "only http:// and https://"),
            ("https://user:pw@example.com/", "user name or password"),
        ] {
            let err = parse_url(url).unwrap_err();
            assert!(err.message().contains(expect), "{url}: {}", err.message());
        }
        let long = format!("https://example.com/{}", "a".repeat(2100));
        assert!(parse_url(&long).is_err());
    }
}
