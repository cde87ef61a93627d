//! The built-in plugins, embedded in the binary by the build script from
//! `plugins/`. They load through the same path as any third-party plugin:
//! manifest, grant, import check, instance per call.
//!
//! Their components and compiled code are embedded packed with zstd, each
//! against a dictionary of its kind (the built-ins share most of their
//! code): as they are, they were two thirds of the binary. The plugin host
//! unpacks a built-in's code only when a run first loads it and keeps it in
//! the compile cache (under `KAIZEN_HOME`), from which later runs map it;
//! the component itself is unpacked only to compile it, on an engine the
//! embedded code is not for.

use kaizen_plugin_host::{
    Capabilities, EmbeddedBytes, HttpCredential, Location, Origin, Pin, PluginSource, Precompiled,
    ProcessCapability,
};
use std::io;
use std::sync::OnceLock;
use zstd::dict::DecoderDictionary;

/// `(name, plugin.toml, component, BLAKE3 of the component, the component
/// compiled at build time)` per built-in; the component and its compiled
/// code are zstd frames packed against [`DICTIONARIES`].
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

/// The dictionaries the components and the compiled code are packed
/// against, each packed alone (the second is empty when the build did not
/// precompile).
const DICTIONARIES: (&[u8], &[u8]) = include!(concat!(env!("OUT_DIR"), "/dictionaries.rs"));

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
                wasm: EmbeddedBytes {
                    stored: wasm,
                    unpack: Some(unpack_component),
                },
                hash,
                precompiled: compiled.map(|code| Precompiled {
                    compatibility_key: PRECOMPILED_FOR,
                    code: EmbeddedBytes {
                        stored: code,
                        unpack: Some(unpack_compiled),
                    },
                }),
            },
            pin: Pin::Unpinned,
        })
        .collect()
}

/// A built-in's component, unpacked.
fn unpack_component(stored: &'static [u8]) -> io::Result<Vec<u8>> {
    static DICTIONARY: OnceLock<Option<DecoderDictionary<'static>>> = OnceLock::new();
    unpack_against(stored, &DICTIONARY, DICTIONARIES.0)
}

/// A built-in's compiled code, unpacked.
fn unpack_compiled(stored: &'static [u8]) -> io::Result<Vec<u8>> {
    static DICTIONARY: OnceLock<Option<DecoderDictionary<'static>>> = OnceLock::new();
    unpack_against(stored, &DICTIONARY, DICTIONARIES.1)
}

/// The zstd frame `stored` unpacked against the dictionary packed in
/// `packed`, which is unpacked the first time and kept in `dictionary`
/// for the rest of the process (a few MiB, held only by a process that
/// unpacks: the first to load a built-in with a given compile cache).
fn unpack_against(
    stored: &[u8],
    dictionary: &OnceLock<Option<DecoderDictionary<'static>>>,
    packed: &[u8],
) -> io::Result<Vec<u8>> {
    let dictionary = dictionary
        .get_or_init(|| {
            let bytes = unpack_with(packed, zstd::bulk::Decompressor::new()).ok()?;
            Some(DecoderDictionary::copy(&bytes))
        })
        .as_ref()
        .ok_or_else(|| invalid("the dictionary of the embedded built-ins does not unpack"))?;
    unpack_with(
        stored,
        zstd::bulk::Decompressor::with_prepared_dictionary(dictionary),
    )
}

/// The zstd frame `stored` unpacked by `decompressor`. Each frame records
/// its size (the build packs each file whole), so the bytes are unpacked
/// into one allocation of the right size, and a checksum, so a frame
/// unpacked against the wrong dictionary fails.
fn unpack_with(
    stored: &[u8],
    decompressor: io::Result<zstd::bulk::Decompressor<'_>>,
) -> io::Result<Vec<u8>> {
    let size = zstd::zstd_safe::get_frame_content_size(stored)
        .ok()
        .flatten()
        .and_then(|size| usize::try_from(size).ok())
        .ok_or_else(|| invalid("an embedded built-in is not a zstd frame that records its size"))?;
    decompressor?.decompress(stored, size)
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_unpacks_to_the_component_its_hash_names() {
        for &(name, _, wasm, hash, compiled) in BUILTINS {
            let component = unpack_component(wasm).unwrap();
            assert_eq!(blake3::hash(&component).as_bytes(), &hash, "{name}");
            if let Some(code) = compiled {
                // What `precompile_component` writes: an ELF image.
                assert!(
                    unpack_compiled(code).unwrap().starts_with(b"\x7fELF"),
                    "{name}"
                );
                // Against the other dictionary, the checksum fails.
                assert!(unpack_component(code).is_err(), "{name}");
            }
        }
        assert!(unpack_component(b"not packed").is_err());
    }
}
