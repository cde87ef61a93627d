//! The outbound HTTP filter: every `wasi:http` request is checked against
//! the plugin's allow-list (scheme, host, port), then its resolved
//! addresses: loopback and private addresses are refused unless the grant
//! names the host exactly. Plain-HTTP requests are sent to the address that
//! was checked, so a second DNS answer cannot redirect them. The operator's
//! credentials for a host are added here, on the way out (see
//! [`super::credential`]).

use super::credential::InjectedHeader;
use super::rule::{HostPattern, is_internal_address};
use http_body_util::BodyExt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

type SendResult = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

/// One plugin's allow-list, plus a record of what it refused (so the tool
/// error can say why a request failed, not just that it did).
#[derive(Clone)]
pub(crate) struct HttpPolicy {
    plugin: Arc<str>,
    allow: Arc<Vec<HostPattern>>,
    credentials: Arc<[InjectedHeader]>,
    refusals: Arc<Mutex<Vec<String>>>,
}

impl HttpPolicy {
    pub fn new(
        plugin: Arc<str>,
        allow: Vec<HostPattern>,
        credentials: Arc<[InjectedHeader]>,
    ) -> Self {
        Self {
            plugin,
            allow: Arc::new(allow),
            credentials,
            refusals: Arc::default(),
        }
    }

    /// What was refused since the last time this was asked, one sentence
    /// each: a call's error tells only its own refusals, also in a
    /// stateful instance that serves many calls.
    pub fn refusals(&self) -> Vec<String> {
        self.refusals
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }
}

impl WasiHttpHooks for HttpPolicy {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        drop(fut);
        Box::new(self.clone().send(request, options))
    }
}

impl HttpPolicy {
    /// Checks `request` and sends it, or refuses it.
    async fn send(
        self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> SendResult {
        let plugin = &self.plugin;
        let target = match Target::of(request.uri()) {
            Some(target) => target,
            None => return Err(Error::HttpRequestUriInvalid),
        };
        let rule = match self.rule_for(&target) {
            Ok(rule) => rule,
            Err(reason) => return self.refuse(reason, Error::HttpRequestDenied),
        };
        let addrs: Vec<SocketAddr> =
            match tokio::net::lookup_host((target.host.as_str(), target.port)).await {
                Ok(addrs) => addrs.collect(),
                Err(_) => Vec::new(),
            };
        let Some(&first) = addrs.first() else {
            return Err(Error::DestinationNotFound);
        };
        if !rule.names_host_exactly()
            && let Some(internal) = addrs.iter().find(|a| is_internal_address(a.ip()))
        {
            return self.refuse(
                format!(
                    "HTTP request to {target} refused: it resolves to the internal address {}, which plugin `{plugin}` may reach only when its grant names the host exactly (it matched `{rule}`)",
                    internal.ip()
                ),
                Error::DestinationIpProhibited,
            );
        }
        if let Err(reason) = self.add_credential(&mut request, &target, &addrs) {
            return self.refuse(reason, Error::HttpRequestDenied);
        }
        let request = if target.scheme == "http" {
            pin_to_address(request, first)?
        } else {
            // TLS verifies the certificate against the name, which a
            // rebinding attacker cannot present for an internal server.
            request
        };
        let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
        Ok((
            response.map(BodyExt::boxed_unsync),
            Box::new(io) as Box<dyn Future<Output = _> + Send>,
        ))
    }

    /// Records and logs why a request was refused.
    fn refuse<T>(&self, reason: String, error: Error) -> Result<T, Error> {
        tracing::warn!(plugin = %self.plugin, "{reason}");
        if let Ok(mut list) = self.refusals.lock() {
            list.push(reason);
        }
        Err(error)
    }

    /// The allow-list entry that lets `target` through, or why none does.
    /// An entry naming the host exactly wins over a wildcard: only it
    /// opens internal addresses.
    fn rule_for(&self, target: &Target) -> Result<&HostPattern, String> {
        let plugin = &self.plugin;
        self.allow
            .iter()
            .filter(|rule| rule.matches(&target.scheme, &target.host, target.port))
            .max_by_key(|rule| rule.names_host_exactly())
            .ok_or_else(|| {
                let granted: Vec<String> = self.allow.iter().map(|r| r.to_string()).collect();
                let granted = if granted.is_empty() {
                    "none".to_string()
                } else {
                    granted.join(", ")
                };
                format!(
                    "HTTP request to {target} refused: not in plugin `{plugin}`'s http grant (granted: {granted})"
                )
            })
    }

    /// Sets the operator's credential for `target`, if there is one, on
    /// `request` (resolved to `addrs`); refused when it would go in clear
    /// text.
    fn add_credential(
        &self,
        request: &mut http::Request<WasiBody>,
        target: &Target,
        addrs: &[SocketAddr],
    ) -> Result<(), String> {
        let Some(credential) = self
            .credentials
            .iter()
            .find(|c| c.matches(&target.scheme, &target.host, target.port))
        else {
            return Ok(());
        };
        // Never in clear text, except to a loopback server the grant names
        // with an explicit `http://` (a test server): nothing on the network
        // can read it there.
        let plain_ok = addrs.iter().all(|addr| addr.ip().is_loopback())
            && self
                .allow
                .iter()
                .any(|rule| rule.names_plain_http(&target.host, target.port));
        if target.scheme != "https" && !plain_ok {
            return Err(format!(
                "HTTP request to {target} refused: the operator's credential for this host ({}) is sent only over https (or over plain http to a loopback address the grant names with an explicit `http://`); use an https:// URL",
                credential.name()
            ));
        }
        // Replaces whatever the plugin set under that name.
        request
            .headers_mut()
            .insert(credential.name().clone(), credential.value().clone());
        tracing::debug!(plugin = %self.plugin, header = %credential.name(), "added the operator's credential to a request for {target}");
        Ok(())
    }
}

/// Scheme, host and port of a request, with defaults filled in.
struct Target {
    scheme: String,
    host: String,
    port: u16,
}

impl Target {
    fn of(uri: &http::Uri) -> Option<Self> {
        let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
        let host = uri
            .host()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let port = uri
            .port_u16()
            .unwrap_or(if scheme == "http" { 80 } else { 443 });
        Some(Self { scheme, host, port })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}://[{}]:{}", self.scheme, self.host, self.port)
        } else {
            write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
        }
    }
}

/// Rewrites the URI's authority to the checked address; the `Host` header
/// set by wasi-http keeps the original name.
fn pin_to_address(
    request: http::Request<WasiBody>,
    addr: SocketAddr,
) -> Result<http::Request<WasiBody>, Error> {
    let (mut parts, body) = request.into_parts();
    let mut uri = parts.uri.into_parts();
    uri.authority = Some(
        addr.to_string()
            .parse()
            .map_err(|_| Error::HttpRequestUriInvalid)?,
    );
    parts.uri = http::Uri::from_parts(uri).map_err(|_| Error::HttpRequestUriInvalid)?;
    Ok(http::Request::from_parts(parts, body))
}
