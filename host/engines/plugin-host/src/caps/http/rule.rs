//! Outbound HTTP allow-list patterns and the address rules behind them.

use std::fmt;
use std::net::IpAddr;

/// One allow-list entry: `[scheme://]host[:port]` where host is a name, an
/// IP literal, `*.domain` or `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    scheme: Option<String>,
    host: HostMatch,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    Any,
    /// `*.suffix`: any name ending in `.suffix`.
    Suffix(String),
    Exact(String),
}

impl HostPattern {
    /// Parses a pattern, lower-casing names.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (scheme, rest) = match text.split_once("://") {
            Some((scheme, rest)) => {
                let scheme = scheme.to_ascii_lowercase();
                if scheme != "http" && scheme != "https" {
                    return Err(format!("scheme `{scheme}` is not http or https"));
                }
                (Some(scheme), rest)
            }
            None => (None, text),
        };
        let rest = rest.trim_end_matches('/');
        if rest.contains('/') {
            return Err("give a host, not a URL path".into());
        }
        let (host, port) = split_host_port(rest)?;
        let host = host.to_ascii_lowercase();
        let host = if host == "*" {
            HostMatch::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            if suffix.is_empty() || suffix.contains('*') {
                return Err("a wildcard must look like `*.example.com`".into());
            }
            HostMatch::Suffix(suffix.to_string())
        } else if host.is_empty() || host.contains('*') {
            return Err("expected a host name, `*.domain` or `*`".into());
        } else {
            HostMatch::Exact(host)
        };
        Ok(Self { scheme, host, port })
    }

    /// True when a request to `scheme://host:port` matches.
    pub fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        self.scheme.as_deref().is_none_or(|s| s == scheme)
            && self.port.is_none_or(|p| p == port)
            && match &self.host {
                HostMatch::Any => true,
                HostMatch::Suffix(suffix) => host
                    .strip_suffix(suffix.as_str())
                    .is_some_and(|head| head.ends_with('.')),
                HostMatch::Exact(name) => name == host,
            }
    }

    /// True when every request `other` allows is also allowed by `self`.
    pub fn covers(&self, other: &HostPattern) -> bool {
        let scheme = match (&self.scheme, &other.scheme) {
            (None, _) => true,
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
        };
        let port = match (self.port, other.port) {
            (None, _) => true,
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
        };
        let host = match (&self.host, &other.host) {
            (HostMatch::Any, _) => true,
            (_, HostMatch::Any) => false,
            (HostMatch::Suffix(a), HostMatch::Suffix(b)) => {
                b == a || b.strip_suffix(a.as_str()).is_some_and(|h| h.ends_with('.'))
            }
            (HostMatch::Suffix(a), HostMatch::Exact(b)) => {
                b.strip_suffix(a.as_str()).is_some_and(|h| h.ends_with('.'))
            }
            (HostMatch::Exact(_), HostMatch::Suffix(_)) => false,
            (HostMatch::Exact(a), HostMatch::Exact(b)) => a == b,
        };
        scheme && port && host
    }

    /// True when the pattern names one host exactly (no wildcard): only
    /// such an entry opens loopback and private addresses.
    pub fn names_host_exactly(&self) -> bool {
        matches!(self.host, HostMatch::Exact(_))
    }

    /// The host and port when the pattern names one host exactly.
    pub(crate) fn exact_host(&self) -> Option<(&str, Option<u16>)> {
        match &self.host {
            HostMatch::Exact(host) => Some((host, self.port)),
            _ => None,
        }
    }

    /// True when the pattern names `host` exactly with an explicit
    /// `http://` scheme and matches `port`: the operator's statement that
    /// the host speaks plain HTTP.
    pub fn names_plain_http(&self, host: &str, port: u16) -> bool {
        self.scheme.as_deref() == Some("http")
            && matches!(&self.host, HostMatch::Exact(name) if name == host)
            && self.port.is_none_or(|p| p == port)
    }
}

/// Listings show a pattern as it is written.
impl serde::Serialize for HostPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(scheme) = &self.scheme {
            write!(f, "{scheme}://")?;
        }
        match &self.host {
            HostMatch::Any => f.write_str("*")?,
            HostMatch::Suffix(suffix) => write!(f, "*.{suffix}")?,
            HostMatch::Exact(host) if host.contains(':') => write!(f, "[{host}]")?,
            HostMatch::Exact(host) => f.write_str(host)?,
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// Splits `host[:port]`, `[v6]` or `[v6]:port`.
fn split_host_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let parse_port = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("port `{p}` is not a number from 0 to 65535"))
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address must be closed with `]`")?;
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(parse_port(port)?))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("unexpected `{after}` after the address")),
        };
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Ok((host, Some(parse_port(port)?))),
        // A bare IPv6 literal without brackets.
        Some(_) => Ok((text, None)),
        None => Ok((text, None)),
    }
}

/// True for addresses a plugin must not reach unless its grant names the
/// host exactly: every block of IANA's IPv4 and IPv6 special-purpose
/// address registries (loopback, private, shared, link-local, benchmarking,
/// reserved, documentation, NAT64's `64:ff9b::/96`, 6to4, Teredo, ...; the
/// registry data is maintained by the `iprfc` crate), plus unspecified,
/// multicast and broadcast addresses. An IPv4-mapped IPv6 address is judged
/// by its IPv4 address.
pub fn is_internal_address(ip: IpAddr) -> bool {
    if let IpAddr::V6(v6) = ip
        && let Some(v4) = v6.to_ipv4_mapped()
    {
        return is_internal_address(IpAddr::V4(v4));
    }
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || broadcast
        || iprfc::RFC6890.contains(&ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> HostPattern {
        HostPattern::parse(text).unwrap()
    }

    #[test]
    fn matching() {
        assert!(p("example.com").matches("https", "example.com", 443));
        assert!(!p("example.com").matches("https", "api.example.com", 443));
        assert!(p("*.example.com").matches("http", "api.example.com", 80));
        assert!(!p("*.example.com").matches("http", "example.com", 80));
        assert!(!p("*.example.com").matches("http", "badexample.com", 80));
        assert!(p("https://x.org:8443").matches("https", "x.org", 8443));
        assert!(!p("https://x.org:8443").matches("http", "x.org", 8443));
        assert!(!p("https://x.org:8443").matches("https", "x.org", 443));
        assert!(p("[::1]:80").matches("http", "::1", 80));
        assert!(p("*").matches("http", "anything", 1));
    }

    #[test]
    fn coverage() {
        assert!(p("*").covers(&p("https://a.b:1")));
        assert!(p("*.b.com").covers(&p("a.b.com")));
        assert!(p("*.com").covers(&p("*.b.com")));
        assert!(!p("*.b.com").covers(&p("*.com")));
        assert!(!p("a.b.com").covers(&p("*.b.com")));
        assert!(!p("https://a.com").covers(&p("a.com")));
        assert!(p("a.com").covers(&p("https://a.com:443")));
        assert!(!p("a.com:80").covers(&p("a.com")));
    }

    #[test]
    fn bad_patterns_explain() {
        assert!(
            HostPattern::parse("ftp://x")
                .unwrap_err()
                .contains("scheme")
        );
        assert!(
            HostPattern::parse("x.com/path")
                .unwrap_err()
                .contains("path")
        );
        assert!(HostPattern::parse("a*.com").is_err());
        assert!(HostPattern::parse("x:99999").unwrap_err().contains("port"));
    }

    #[test]
    fn display_round_trips() {
        for text in ["*", "*.a.com", "https://a.com:8443", "[::1]:80", "10.0.0.1"] {
            assert_eq!(p(text).to_string(), text);
        }
    }

    #[test]
    fn internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            // The ones a hand-written list missed.
            "192.0.0.1",
            "198.18.0.1",
            "198.19.255.255",
            "240.0.0.1",
            "255.255.255.255",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "2002:a00:1::1",
            "224.0.0.1",
            "ff02::1",
        ] {
            assert!(is_internal_address(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_internal_address(ip.parse().unwrap()), "{ip}");
        }
    }
}
