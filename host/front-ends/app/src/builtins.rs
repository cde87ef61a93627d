//! The built-in plugins, embedded in the binary by the build script from
//! `plugins/`. They load through the same path as any third-party plugin:
//! manifest, grant, import check, instance per call.

use kaizen_plugin_host::{
    Capabilities, HttpCredential, Location, Origin, Pin, PluginSource, Precompiled,
    ProcessCapability,
};

/// `(name, plugin.toml, component, BLAKE3 of the component, the component
/// compiled at build time)` per built-in.
type Embedded = (
    &'static str,
    &'static str,
    &'static [u8],
    [u8; 32],
    Option<&'static [u8]>,
);

const BUILTINS: &[Embedded] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// The compatibility key of the engine that compiled the built-ins (empty
/// when the build did not precompile).
const PRECOMPILED_FOR: &str = include!(concat!(env!("OUT_DIR"), "/precompiled_for.rs"));

/// The built-in hook plugins: loaded for a run only when the user's
/// `[hooks] builtins` names them, so a run without them pays nothing.
pub const HOOKS: &[&str] = &["audit", "redact"];

/// A source for every built-in plugin.
pub fn sources() -> Vec<PluginSource> {
    sources_where(|_| true)
}

/// The built-in planners: loaded for a run only when it uses one.
/// `self-consistency` is written in Python and carried as source
/// (`kits::from_source`).
pub const PLANNERS: &[&str] = &[
    "react",
    "plan-execute-verify",
    "tree-of-thoughts",
    "reflexion",
    "self-consistency",
];

/// A source for every built-in plugin but the hooks `enabled` does not
/// name and the planners other than `planner`.
pub fn sources_for_run(enabled: &[String], planner: Option<&str>) -> Vec<PluginSource> {
    sources_where(|name| {
        if PLANNERS.contains(&name) {
            return planner == Some(name);
        }
        !HOOKS.contains(&name) || enabled.iter().any(|e| e == name)
    })
}

fn sources_where(keep: impl Fn(&str) -> bool) -> Vec<PluginSource> {
    BUILTINS
        .iter()
        .filter(|(name, ..)| keep(name))
        .map(|&(name, manifest, wasm, hash, compiled)| PluginSource {
            origin: Origin::Builtin,
            location: Location::Embedded {
                name,
                manifest,
                wasm,
                hash,
                precompiled: compiled.map(|code| Precompiled {
                    compatibility_key: PRECOMPILED_FOR,
                    code,
                }),
            },
            pin: Pin::Unpinned,
        })
        .collect()
}

/// What the built-ins that need more than the workspace are granted when
/// no config file has a `[grants.NAME]` table for them (one replaces the
/// default; `http = []` turns the network off):
/// - `webfetch`: `http = ["*"]`, public hosts (a wildcard never reaches
///   loopback or private addresses; a grant naming such a host does);
/// - `websearch`: the providers' API hosts over https, and the variables
///   that choose the provider and its URL;
/// - `grep`: `parallel`, to split a search over many files across cores;
/// - `task`: `agent`, to start sub-agents (which spend from the session's
///   budget);
/// - `bash`: `bash` as its one program, without network;
/// - `audit`: its data directory, for its log;
/// - the planners that ask the model (`plan-execute-verify`,
///   `tree-of-thoughts`, `reflexion`): `llm`, within `[plugin-llm]`'s
///   caps.
pub fn default_grants() -> Vec<(&'static str, Capabilities)> {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    let llm = Capabilities {
        llm: true,
        ..Capabilities::default()
    };
    let mut grants = vec![
        (
            "webfetch",
            Capabilities {
                http: strings(&["*"]),
                ..Capabilities::default()
            },
        ),
        (
            "websearch",
            Capabilities {
                http: strings(&["https://api.search.brave.com", "https://api.tavily.com"]),
                env: strings(&["KAIZEN_WEBSEARCH_PROVIDER", "KAIZEN_WEBSEARCH_URL"]),
                ..Capabilities::default()
            },
        ),
        (
            "grep",
            Capabilities {
                parallel: true,
                ..Capabilities::default()
            },
        ),
        (
            "task",
            Capabilities {
                agent: true,
                ..Capabilities::default()
            },
        ),
        (
            "bash",
            Capabilities {
                process: Some(ProcessCapability {
                    programs: strings(&["bash"]),
                    network: false,
                }),
                ..Capabilities::default()
            },
        ),
        (
            "audit",
            Capabilities {
                data_dir: true,
                ..Capabilities::default()
            },
        ),
    ];
    for planner in ["plan-execute-verify", "tree-of-thoughts", "reflexion"] {
        grants.push((planner, llm.clone()));
    }
    grants
}

/// The search providers' keys, added by the host to `websearch`'s requests
/// for their API hosts when the variable is set, unless the user's config
/// has a credential for the same host.
pub fn default_credentials() -> Vec<HttpCredential> {
    let credential = |host: &str, header: &str, env: &str, prefix: &str| HttpCredential {
        host: host.into(),
        header: header.into(),
        env: env.into(),
        prefix: prefix.into(),
        plugins: vec!["websearch".into()],
    };
    vec![
        credential(
            "api.search.brave.com",
            "X-Subscription-Token",
            "BRAVE_SEARCH_API_KEY",
            "",
        ),
        credential(
            "api.tavily.com",
            "Authorization",
            "TAVILY_API_KEY",
            "Bearer ",
        ),
    ]
}
