//! Load-time checks: capabilities named when missing, broken components and
//! manifests explained, clashes reported with both names, and the compile
//! cache trusted only when intact.

mod common;

use common::{Harness, error, manifest, source, text};
use kaizen_plugin_host::{CacheOutcome, Capabilities, PluginSet, ProcessCapability};

#[tokio::test]
async fn ungranted_import_is_refused_at_load_naming_the_capability() {
    let h = Harness::new();
    let dir = kaizen_test_artifacts::plugin_dir("needs-process");
    let err = h.load_dir(&dir).await.err().expect("must not load");
    let process = format!(
        "kaizen:plugin/process@{}",
        kaizen_plugin_host::CONTRACT_VERSION
    );
    assert!(err.message.contains(&process), "{err}");
    assert!(err.message.contains("`process` capability"), "{err}");
    assert!(err.message.contains("[grants.needs-process]"), "{err}");
    let grant = err.grant.expect("the grant is reported");
    assert!(grant.denied.contains(&"process: not granted".to_string()));
}

#[tokio::test]
async fn a_granted_process_import_runs_only_the_granted_programs() {
    let mut h = Harness::new();
    h.policy.grants.insert(
        "needs-process".into(),
        Capabilities {
            process: Some(ProcessCapability {
                programs: vec!["true".into()],
                network: false,
            }),
            ..Capabilities::default()
        },
    );
    let registry = h.registry(&["needs-process"]).await;
    let ctx = h.ctx("process-session");
    let ran = text(registry.call(&ctx, "Run", r#"{"program":"true"}"#).await);
    assert_eq!(ran, "exit: 0\n");
    let refused = error(registry.call(&ctx, "Run", r#"{"program":"ls"}"#).await);
    assert!(
        refused.message.contains("NotAllowed"),
        "{}",
        refused.message
    );
    assert!(
        refused.message.contains("process.programs"),
        "{}",
        refused.message
    );
}

#[tokio::test]
async fn http_import_without_grant_is_refused() {
    let h = Harness::new();
    let err = h
        .load_dir(&kaizen_test_artifacts::plugin_dir("http-probe"))
        .await
        .err()
        .expect("must not load");
    assert!(err.message.contains("wasi:http/"), "{err}");
    assert!(err.message.contains("`http` capability"), "{err}");
}

#[tokio::test]
async fn files_that_are_not_components_are_explained() {
    let h = Harness::new();
    let cases: [(&[u8], &str); 3] = [
        (b"this is text", "not WebAssembly at all"),
        (
            b"\0asm\x01\0\0\0",
            "core WebAssembly module, not a component",
        ),
        (b"\0asm\x0d\0\x01\0\xff\xff", "is not a valid component"),
    ];
    for (i, (bytes, expected)) in cases.into_iter().enumerate() {
        let dir = h.custom_plugin(
            &format!("bad{i}"),
            "hello",
            &manifest(&format!("bad{i}"), ""),
        );
        std::fs::write(dir.join("component.wasm"), bytes).unwrap();
        let err = h.load_dir(&dir).await.err().expect("must not load");
        assert!(err.message.contains(expected), "{expected}: {err}");
    }
}

#[tokio::test]
async fn missing_component_and_manifest_problems_say_what_to_fix() {
    let h = Harness::new();
    let dir = h.custom_plugin("gone", "hello", &manifest("gone", ""));
    std::fs::remove_file(dir.join("component.wasm")).unwrap();
    let err = h.load_dir(&dir).await.err().unwrap();
    assert!(
        err.message.contains("does not exist; build the plugin"),
        "{err}"
    );

    let empty = h.scratch.path().join("empty-plugin");
    std::fs::create_dir_all(&empty).unwrap();
    let err = h.load_dir(&empty).await.err().unwrap();
    assert!(err.message.contains("has no plugin.toml"), "{err}");

    // The manifest's word on the contract is only a note: the version is
    // the component's.
    let dir = h.custom_plugin(
        "v9",
        "hello",
        &manifest("v9", "").replace("contract = \"0.1.0\"", "contract = \"9.9.9\""),
    );
    assert_eq!(
        h.load_dir(&dir).await.unwrap().contract,
        kaizen_plugin_host::CONTRACT_VERSION
    );
    let dir = h.custom_plugin(
        "unsaid",
        "py-echo",
        &manifest("unsaid", "").replace("contract = \"0.1.0\"\n", ""),
    );
    assert_eq!(h.load_dir(&dir).await.unwrap().contract, "0.1.0");

    let dir = h.custom_plugin(
        "typo",
        "hello",
        &format!("{}\n[capabilities]\nfilesytem = []\n", manifest("typo", "")),
    );
    let err = h.load_dir(&dir).await.err().unwrap();
    assert!(err.message.contains("unknown field `filesytem`"), "{err}");
}

#[tokio::test]
async fn declared_kind_must_match_the_exports() {
    let h = Harness::new();
    let dir = h.custom_plugin(
        "not-a-hook",
        "hello",
        &manifest("not-a-hook", "").replace("kinds = [\"tool\"]", "kinds = [\"hook\"]"),
    );
    let err = h.load_dir(&dir).await.err().unwrap();
    assert!(
        err.message
            .contains("does not export kaizen:plugin/hooks in a version this Kaizen supports"),
        "{err}"
    );
    let tools = format!(
        "kaizen:plugin/tools@{}",
        kaizen_plugin_host::CONTRACT_VERSION
    );
    assert!(err.message.contains(&tools), "{err}");
}

#[tokio::test]
async fn duplicate_tool_and_plugin_names_name_both() {
    let h = Harness::new();
    let twin = h.custom_plugin("hello-twin", "hello", &manifest("hello-twin", ""));
    let same_name = h.custom_plugin("hello-again", "hello", &manifest("hello", ""));
    let sources = [
        source(&kaizen_test_artifacts::plugin_dir("hello")),
        source(&twin),
        source(&same_name),
        source(&kaizen_test_artifacts::plugin_dir("counter")),
    ];
    let set = PluginSet::load(&h.host, &sources, &h.policy).await;
    let loaded: Vec<&str> = set
        .loaded
        .iter()
        .map(|p| p.manifest.plugin.name.as_str())
        .collect();
    assert_eq!(loaded, ["hello", "counter"]);
    let messages: Vec<&str> = set
        .failed
        .iter()
        .map(|f| f.error.message.as_str())
        .collect();
    assert!(
        messages[0].contains("`hello`") && messages[0].contains("`hello-twin`"),
        "{messages:?}"
    );
    assert!(messages[0].contains("Greet"), "{messages:?}");
    assert!(
        messages[1].contains("a plugin named `hello` is already loaded"),
        "{messages:?}"
    );
    assert_eq!(set.registry.len(), 4);
}

#[tokio::test]
async fn the_compile_cache_is_reused_and_never_trusted_when_damaged() {
    let h = Harness::with_private_cache();
    let dir = h.custom_plugin("cached", "hello", &manifest("cached", ""));
    assert_eq!(
        h.load_dir(&dir).await.unwrap().cache,
        CacheOutcome::Compiled
    );
    assert_eq!(h.load_dir(&dir).await.unwrap().cache, CacheOutcome::Hit);

    // Flip a byte in the artifact: detected, recompiled, still works.
    let cache_dir = h.host.cache().unwrap().dir().to_path_buf();
    let artifact = artifacts(&cache_dir)[0].clone();
    let mut bytes = std::fs::read(&artifact).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&artifact, &bytes).unwrap();
    let plugin = h.load_dir(&dir).await.unwrap();
    assert_eq!(plugin.cache, CacheOutcome::Replaced);
    assert_eq!(plugin.tools.len(), 2);

    // Truncated: the same.
    std::fs::write(&artifact, &bytes[..100]).unwrap();
    assert_eq!(
        h.load_dir(&dir).await.unwrap().cache,
        CacheOutcome::Replaced
    );
    assert_eq!(h.load_dir(&dir).await.unwrap().cache, CacheOutcome::Hit);

    // Without its MAC (an older cache's artifact, a store cut short) an
    // artifact is not used: compiled again.
    std::fs::remove_file(artifact.with_extension("mac")).unwrap();
    assert_eq!(
        h.load_dir(&dir).await.unwrap().cache,
        CacheOutcome::Compiled
    );

    // A changed component is compiled anew, not served from the old entry.
    std::fs::copy(
        kaizen_test_artifacts::wasm("counter"),
        dir.join("component.wasm"),
    )
    .unwrap();
    let plugin = h.load_dir(&dir).await.unwrap();
    assert_eq!(plugin.cache, CacheOutcome::Compiled);
    let names: Vec<&str> = plugin.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Count", "Noop"]);
}

/// The attack on the compile cache: replace a plugin's cached artifact
/// with another component's compiled code (here `counter`'s, standing in
/// for an attacker's) under a recomputed plain checksum, or a checksum
/// under another key. Either way the host refuses it, recompiles, and
/// serves the real plugin.
#[tokio::test]
async fn a_forged_cache_artifact_is_refused() {
    let h = Harness::with_private_cache();
    let dir = h.custom_plugin("victim", "hello", &manifest("victim", ""));
    assert_eq!(
        h.load_dir(&dir).await.unwrap().cache,
        CacheOutcome::Compiled
    );
    let cache_dir = h.host.cache().unwrap().dir().to_path_buf();
    let artifact = artifacts(&cache_dir)[0].clone();
    let mac = artifact.with_extension("mac");
    let real_mac = std::fs::read(&mac).unwrap();
    let (magic, _) = real_mac.split_at(8);

    // The attacker's code, compiled by an engine like the host's.
    let attacker = h.custom_plugin("attacker", "counter", &manifest("attacker", ""));
    h.load_dir(&attacker).await.unwrap();
    let evil_artifact = artifacts(&cache_dir)
        .into_iter()
        .find(|p| *p != artifact)
        .unwrap();
    let evil_code = std::fs::read(&evil_artifact).unwrap();

    for checksum in [
        blake3::hash(&evil_code),
        blake3::keyed_hash(&[0x41; 32], &evil_code),
    ] {
        let mut forged = magic.to_vec();
        forged.extend_from_slice(checksum.as_bytes());
        std::fs::write(&artifact, &evil_code).unwrap();
        std::fs::write(&mac, &forged).unwrap();
        let plugin = h.load_dir(&dir).await.unwrap();
        assert_eq!(plugin.cache, CacheOutcome::Replaced);
        let names: Vec<&str> = plugin.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Greet", "Add"], "the forged code was not run");
    }
    // The key beside the cache is the user's alone.
    use std::os::unix::fs::PermissionsExt as _;
    let key = cache_dir.parent().unwrap().with_extension("key");
    let key = std::fs::metadata(&key).unwrap_or_else(|err| panic!("{}: {err}", key.display()));
    assert_eq!(key.permissions().mode() & 0o777, 0o600);
}

/// What a load of an unchanged plugin skips: reading and hashing its
/// component, and reading and checking its artifact. Once the files have
/// settled (their records wait a second, as file times are coarse), a load
/// maps the artifact it verified before; a change to the artifact in place,
/// even one that keeps its size and sets its times back, is caught again.
#[tokio::test]
async fn an_artifact_verified_once_is_mapped_and_a_later_change_is_still_caught() {
    let h = Harness::with_private_cache();
    let dir = h.custom_plugin("settled", "hello", &manifest("settled", ""));
    assert_eq!(
        h.load_dir(&dir).await.unwrap().cache,
        CacheOutcome::Compiled
    );
    std::thread::sleep(std::time::Duration::from_millis(1200));
    // This load verifies the settled files and records them.
    assert_eq!(h.load_dir(&dir).await.unwrap().cache, CacheOutcome::Hit);
    let cache_dir = h.host.cache().unwrap().dir().to_path_buf();
    let records = std::fs::read_dir(cache_dir.join("verified"))
        .unwrap()
        .count();
    assert_eq!(records, 2, "the component and its artifact are recorded");
    // Served from the records: the artifact mapped as it is.
    let plugin = h.load_dir(&dir).await.unwrap();
    assert_eq!(plugin.cache, CacheOutcome::Hit);
    assert_eq!(plugin.tools.len(), 2);

    let artifact = artifacts(&cache_dir)[0].clone();
    let mut bytes = std::fs::read(&artifact).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    let times = std::fs::metadata(&artifact).unwrap().modified().unwrap();
    std::fs::write(&artifact, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&artifact)
        .unwrap()
        .set_modified(times)
        .unwrap();
    let plugin = h.load_dir(&dir).await.unwrap();
    assert_eq!(plugin.cache, CacheOutcome::Replaced);
    assert_eq!(plugin.tools.len(), 2);
}

/// How often [`unpack_counted`] ran.
static UNPACKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Stands in for a binary's unpacking (its bytes are stored as they are),
/// counting the calls.
fn unpack_counted(stored: &'static [u8]) -> std::io::Result<Vec<u8>> {
    UNPACKED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok(stored.to_vec())
}

/// A built-in's code, packed in the binary, is unpacked the first time it
/// loads and taken from the compile cache after; its component is never
/// unpacked, and damage to the cached copy costs one unpacking more.
#[tokio::test]
async fn embedded_code_is_unpacked_once_and_kept_in_the_cache() {
    use kaizen_plugin_host::{EmbeddedBytes, Location, Origin, Pin, PluginSource, Precompiled};
    use std::sync::atomic::Ordering;
    let h = Harness::with_private_cache();
    let wasm = std::fs::read(kaizen_test_artifacts::wasm("hello")).unwrap();
    let engine = h.host.engine();
    let code = engine.engine().precompile_component(&wasm).unwrap();
    let packed = |bytes: Vec<u8>| EmbeddedBytes {
        stored: Vec::leak(bytes),
        unpack: Some(unpack_counted),
    };
    let source = PluginSource {
        origin: Origin::Builtin,
        location: Location::Embedded {
            name: "embedded",
            manifest: String::leak(manifest("embedded", "")),
            wasm: EmbeddedBytes {
                stored: b"not a component: never read",
                unpack: None,
            },
            hash: *blake3::hash(&wasm).as_bytes(),
            precompiled: Some(Precompiled {
                compatibility_key: String::leak(engine.compatibility_key().to_owned()),
                code: packed(code),
            }),
        },
        pin: Pin::Unpinned,
    };
    for _ in 0..3 {
        let plugin = h.host.load(&source, &h.policy).await.unwrap();
        assert_eq!(plugin.cache, CacheOutcome::Precompiled);
        assert_eq!(plugin.tools.len(), 2);
    }
    assert_eq!(UNPACKED.load(Ordering::SeqCst), 1);

    let cache_dir = h.host.cache().unwrap().dir().to_path_buf();
    let artifact = artifacts(&cache_dir)[0].clone();
    std::fs::write(&artifact, b"damaged").unwrap();
    let plugin = h.host.load(&source, &h.policy).await.unwrap();
    assert_eq!(plugin.tools.len(), 2);
    assert_eq!(UNPACKED.load(Ordering::SeqCst), 2);
}

/// The compiled artifacts in `dir`.
fn artifacts(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect()
}
