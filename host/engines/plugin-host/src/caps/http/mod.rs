//! `http`: outbound requests through `wasi:http`, filtered by the
//! plugin's allow-list, with the operator's credentials added on the way
//! out.

mod credential;
mod policy;
mod rule;

pub use credential::HttpCredential;
pub use rule::HostPattern;

use super::{
    CapStore, CapView, EffectiveGrant, GrantContext, HostCapability, LoadContext, Slot,
    StoreContext,
};
use credential::InjectedHeader;
use kaizen_sandbox::Containment;
use policy::HttpPolicy;
use std::sync::Arc;
use wasmtime::component::Linker;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView};

/// The variable in which a plugin with an HTTP grant finds its allow-list:
/// patterns separated by spaces.
pub const HTTP_ALLOW_ENV: &str = "KAIZEN_HTTP_ALLOW";

/// The `http` capability.
pub(crate) struct Http;

/// What a store keeps for `wasi:http`.
pub(crate) struct HttpState {
    ctx: WasiHttpCtx,
    policy: HttpPolicy,
}

impl HostCapability for Http {
    const NAME: &'static str = "http";
    const IMPORTS: &'static [&'static str] = &["wasi:http/outgoing-handler", "wasi:http/types"];
    const ENV_VAR: Option<&'static str> = Some(HTTP_ALLOW_ENV);
    type Request = Vec<String>;
    type Grant = Vec<HostPattern>;
    /// The headers its requests get, secrets read at load.
    type Shared = Arc<[InjectedHeader]>;
    type State = HttpState;

    fn check(patterns: &Vec<String>) -> Result<(), String> {
        for pattern in patterns {
            HostPattern::parse(pattern)
                .map_err(|err| format!("http pattern `{pattern}`: {err}"))?;
        }
        Ok(())
    }

    fn union(a: &Vec<String>, b: &Vec<String>) -> Vec<String> {
        super::merged(a, b)
    }

    /// A request covered by a grant gets the request; a grant inside the
    /// request gets the grant. The operator's credentials for the hosts
    /// granted go with the grant.
    fn intersect(
        cx: &GrantContext<'_>,
        requested: &Vec<String>,
        granted: &Vec<String>,
        out: &mut EffectiveGrant,
    ) -> Vec<HostPattern> {
        let allow = intersect_patterns(requested, granted, &mut out.denied);
        out.http_credentials = cx
            .http_credentials
            .iter()
            .filter(|cred| cred.applies(cx.plugin, &allow))
            .cloned()
            .collect();
        allow
    }

    fn is_granted(grant: &Vec<HostPattern>) -> bool {
        !grant.is_empty()
    }

    fn describe_request(patterns: &Vec<String>) -> Vec<String> {
        describe(patterns)
    }

    fn describe_grant(grant: &Vec<HostPattern>) -> Vec<String> {
        describe(grant)
    }

    fn escapes(grant: &Vec<HostPattern>, _sandbox: &Containment) -> bool {
        !grant.is_empty()
    }

    /// The allow-list, so that a plugin can explain a refusal before
    /// trying (the host's own check applies regardless).
    fn env_value(grant: &Vec<HostPattern>) -> Option<String> {
        let allow: Vec<String> = grant.iter().map(ToString::to_string).collect();
        (!allow.is_empty()).then(|| allow.join(" "))
    }

    /// `wasi:http` reaches the store through [`ctx_view`].
    fn link<T: CapStore>(linker: &mut Linker<T>) -> wasmtime::Result<()>
    where
        T::Caps: Slot<Self>,
    {
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
    }

    fn load(cx: &LoadContext<'_>) -> Arc<[InjectedHeader]> {
        InjectedHeader::resolve(cx.plugin, &cx.grant.http_credentials).into()
    }

    fn new_state(
        headers: &Arc<[InjectedHeader]>,
        cx: &mut StoreContext<'_>,
    ) -> anyhow::Result<HttpState> {
        Ok(HttpState {
            ctx: WasiHttpCtx::new(),
            policy: HttpPolicy::new(cx.plugin.clone(), cx.grant.http.clone(), headers.clone()),
        })
    }

    /// Why requests were refused: the allow-list, an internal address, a
    /// credential kept from plain HTTP.
    fn take_refusals(state: &HttpState) -> Vec<String> {
        state.policy.refusals()
    }
}

/// Hosts granted of `requested`; refusals pushed to `denied`.
fn intersect_patterns(
    requested: &[String],
    granted: &[String],
    denied: &mut Vec<String>,
) -> Vec<HostPattern> {
    // Both sides were checked when their files were parsed.
    let grants: Vec<HostPattern> = granted
        .iter()
        .filter_map(|p| HostPattern::parse(p).ok())
        .collect();
    let mut allow: Vec<HostPattern> = Vec::new();
    let mut add = |pattern: &HostPattern| {
        if !allow.contains(pattern) {
            allow.push(pattern.clone());
        }
    };
    for text in requested {
        let Ok(want) = HostPattern::parse(text) else {
            continue;
        };
        if grants.iter().any(|grant| grant.covers(&want)) {
            // Exact hosts granted inside a wildcard request are kept too:
            // only an entry naming a host opens its internal addresses.
            let exact = grants
                .iter()
                .filter(|g| g.names_host_exactly() && want.covers(g) && **g != want);
            std::iter::once(&want).chain(exact).for_each(&mut add);
            continue;
        }
        // Like directories: a grant inside the request gets the grant, so
        // a plugin requesting `*` reaches exactly the hosts granted to it.
        let inside: Vec<&HostPattern> = grants.iter().filter(|g| want.covers(g)).collect();
        if inside.is_empty() {
            denied.push(format!("http: {want}"));
        }
        inside.into_iter().for_each(&mut add);
    }
    allow
}

/// Patterns as listings show them: one line, `http a, b`.
fn describe<T: ToString>(patterns: &[T]) -> Vec<String> {
    if patterns.is_empty() {
        return Vec::new();
    }
    let hosts: Vec<String> = patterns.iter().map(ToString::to_string).collect();
    vec![format!("http {}", hosts.join(", "))]
}

/// What `wasi:http` reaches of a store: its context, the store's
/// resources, and the plugin's policy on every request. A store's
/// `WasiHttpView` gives this (wasmtime-wasi-http links against that trait).
pub(crate) fn ctx_view(view: CapView<'_, Http>) -> WasiHttpCtxView<'_> {
    let CapView { table, state, .. } = view;
    WasiHttpCtxView {
        ctx: &mut state.ctx,
        table,
        hooks: &mut state.policy,
    }
}
