//! Pinned and signed plugins, with real components: a lock refuses a
//! plugin whose files changed since they were recorded, and the signature
//! policy refuses unsigned, wrongly signed and tampered components before
//! they are compiled.

mod common;

use kaizen_plugin_host::{
    Digest, GrantPolicy, HostOptions, LoadError, LoadedPlugin, LockEntry, PluginHost, PluginLock,
    SignaturePolicy, TrustedKey, signature_path, sources_in,
};
use kaizen_plugin_host::{MANIFEST_FILE, Origin};
use minisign::KeyPair;
use std::path::{Path, PathBuf};

/// A plugin root holding a copy of the `hello` test plugin.
fn root_with_hello() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("hello");
    std::fs::create_dir_all(&dir).unwrap();
    let stock = kaizen_test_artifacts::plugin_dir("hello");
    for entry in std::fs::read_dir(&stock).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    (root, dir)
}

fn component(dir: &Path) -> PathBuf {
    kaizen_plugin_host::Manifest::load(dir)
        .unwrap()
        .component_path(dir)
}

fn pin(root: &Path, dir: &Path) {
    let entry = LockEntry {
        manifest: Digest::of(&std::fs::read(dir.join(MANIFEST_FILE)).unwrap()),
        component: Digest::of(&std::fs::read(component(dir)).unwrap()),
        signer: None,
        added_from: None,
    };
    let mut lock = PluginLock::default();
    lock.plugins.insert("hello".into(), entry);
    lock.save(root).unwrap();
}

fn host(scratch: &Path, signatures: SignaturePolicy) -> PluginHost {
    PluginHost::new(HostOptions {
        cache_dir: Some(scratch.join("cache")),
        signatures,
        ..HostOptions::default()
    })
    .unwrap()
}

async fn load_root(host: &PluginHost, root: &Path) -> Result<LoadedPlugin, LoadError> {
    let sources = sources_in(&[(root.to_path_buf(), Origin::User)]);
    assert_eq!(sources.len(), 1);
    let policy = GrantPolicy::new(root);
    host.load(&sources[0], &policy).await
}

fn sign(keys: &KeyPair, file: &Path) {
    let signature = minisign::sign(
        Some(&keys.pk),
        &keys.sk,
        std::fs::File::open(file).unwrap(),
        None,
        None,
    )
    .unwrap();
    std::fs::write(signature_path(file), signature.into_string()).unwrap();
}

fn trusting(keys: &[&KeyPair], required: bool) -> SignaturePolicy {
    SignaturePolicy {
        required,
        trusted: keys
            .iter()
            .map(|keys| TrustedKey::parse(&keys.pk.to_base64()).unwrap())
            .collect(),
    }
}

#[tokio::test]
async fn a_pinned_plugin_loads_until_its_component_or_manifest_changes() {
    let scratch = tempfile::tempdir().unwrap();
    let host = host(scratch.path(), SignaturePolicy::default());
    let (root, dir) = root_with_hello();
    pin(root.path(), &dir);
    let loaded = load_root(&host, root.path()).await.unwrap();
    assert_eq!(
        loaded.integrity.pinned_by.as_deref(),
        Some(root.path().join("plugins.lock").as_path())
    );
    // Loaded once more from the cache's record, unchanged: still fine.
    load_root(&host, root.path()).await.unwrap();

    // One byte appended to the component (a custom section's worth).
    let wasm = component(&dir);
    let mut bytes = std::fs::read(&wasm).unwrap();
    let recorded = Digest::of(&bytes);
    bytes.extend_from_slice(&[0, 1, 0]);
    std::fs::write(&wasm, &bytes).unwrap();
    let err = load_root(&host, root.path()).await.err().unwrap().message;
    assert!(err.contains(&recorded.to_string()), "{err}");
    assert!(err.contains(&Digest::of(&bytes).to_string()), "{err}");
    assert!(err.contains("kaizen plugins add"), "{err}");

    // The component restored, the manifest asking for more.
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&wasm, &bytes).unwrap();
    load_root(&host, root.path()).await.unwrap();
    let manifest = dir.join(MANIFEST_FILE);
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[capabilities]\nenv = [\"HOME\"]\n");
    std::fs::write(&manifest, &text).unwrap();
    let err = load_root(&host, root.path()).await.err().unwrap().message;
    assert!(err.contains("its manifest"), "{err}");
}

#[tokio::test]
async fn a_plugin_the_lock_does_not_list_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let host = host(scratch.path(), SignaturePolicy::default());
    let (root, _dir) = root_with_hello();
    PluginLock::default().save(root.path()).unwrap();
    let err = load_root(&host, root.path()).await.err().unwrap().message;
    assert!(err.contains("is not listed in"), "{err}");

    std::fs::write(root.path().join("plugins.lock"), "version = [").unwrap();
    let err = load_root(&host, root.path()).await.err().unwrap().message;
    assert!(err.contains("not a valid plugin lock"), "{err}");
}

#[tokio::test]
async fn signatures_are_required_checked_and_remembered() {
    let scratch = tempfile::tempdir().unwrap();
    let trusted = KeyPair::generate_unencrypted_keypair().unwrap();
    let stranger = KeyPair::generate_unencrypted_keypair().unwrap();
    let (root, dir) = root_with_hello();
    let wasm = component(&dir);

    // Required, and there is no signature.
    let strict = host(scratch.path(), trusting(&[&trusted], true));
    let err = load_root(&strict, root.path()).await.err().unwrap().message;
    assert!(err.contains("is not signed"), "{err}");
    assert!(err.contains("minisign -Sm"), "{err}");
    // Not required: an unsigned plugin loads.
    let lenient = host(scratch.path(), trusting(&[&trusted], false));
    let loaded = load_root(&lenient, root.path()).await.unwrap();
    assert_eq!(loaded.integrity.signed_by, None);

    // Signed by a key nobody trusts.
    sign(&stranger, &wasm);
    let err = load_root(&strict, root.path()).await.err().unwrap().message;
    assert!(err.contains("a key you do not trust"), "{err}");

    // Signed by the trusted key: loads, twice (the second time the cache
    // remembers the verified signature).
    sign(&trusted, &wasm);
    for _ in 0..2 {
        let loaded = load_root(&strict, root.path()).await.unwrap();
        assert_eq!(
            loaded.integrity.signed_by.as_deref(),
            Some(trusted.pk.to_base64().as_str())
        );
    }

    // The component changed after signing: refused even where signatures
    // are not required, because a signature that does not match is a sign
    // of tampering.
    let mut bytes = std::fs::read(&wasm).unwrap();
    bytes.extend_from_slice(&[0, 1, 0]);
    std::fs::write(&wasm, &bytes).unwrap();
    for host in [&strict, &lenient] {
        let err = load_root(host, root.path()).await.err().unwrap().message;
        assert!(err.contains("does not verify"), "{err}");
    }

    // A signature file that is not one.
    std::fs::write(signature_path(&wasm), "hello").unwrap();
    let err = load_root(&lenient, root.path())
        .await
        .err()
        .unwrap()
        .message;
    assert!(err.contains("is not a minisign signature"), "{err}");
    std::fs::write(signature_path(&wasm), vec![b'x'; 1 << 20]).unwrap();
    let err = load_root(&lenient, root.path())
        .await
        .err()
        .unwrap()
        .message;
    assert!(err.contains("too large for a minisign signature"), "{err}");
}

#[test]
fn trusted_keys_parse_from_the_base64_line_or_a_pub_file() {
    let keys = KeyPair::generate_unencrypted_keypair().unwrap();
    let line = keys.pk.to_base64();
    assert_eq!(TrustedKey::parse(&line).unwrap().as_str(), line);
    let file = keys.pk.to_box().unwrap().into_string();
    assert_eq!(TrustedKey::parse(&file).unwrap().as_str(), line);
    let err = TrustedKey::parse("RWQnot-a-key").unwrap_err();
    assert!(err.contains("not a minisign public key"), "{err}");
}
