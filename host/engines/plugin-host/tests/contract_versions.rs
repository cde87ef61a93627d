//! The contract's versions: components of every supported version load
//! side by side, and what a host does not provide (an unknown version,
//! the drafts of `llm` and `planning` from before they were stable) is
//! refused with a message that says what it does provide.

mod common;

use common::{Harness, text};
use std::path::{Path, PathBuf};
use wit_parser::{ManglingAndAbi, Resolve};

/// A plugin directory holding a component whose functions all trap, of
/// the world with `body` (includes and imports of the contract at `wit`),
/// with the unstable `features` switched on; its manifest says `kinds`.
fn dummy_plugin(
    h: &Harness,
    name: &str,
    wit: &Path,
    body: &str,
    features: &[&str],
    kinds: &str,
) -> PathBuf {
    let mut resolve = Resolve::default();
    resolve
        .features
        .extend(features.iter().map(|f| f.to_string()));
    resolve.push_path(wit).unwrap();
    let package = resolve
        .push_str(
            "dummy.wit",
            &format!("package test:dummy;\nworld dummy {{\n{body}\n}}\n"),
        )
        .unwrap();
    let world = resolve.select_world(&[package], Some("dummy")).unwrap();
    let mut module = wit_component::dummy_module(&resolve, world, ManglingAndAbi::Standard32);
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .unwrap();
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap();
    let dir = h.scratch.path().join("plugins").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("component.wasm"), component).unwrap();
    let manifest = common::manifest(name, "").replace("kinds = [\"tool\"]", kinds);
    std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
    dir
}

/// Contract `version` in full, as the build put it together from `wit/`.
fn contract_wit(version: &str) -> PathBuf {
    Path::new(env!("OUT_DIR")).join(format!("wit/v{version}"))
}

#[tokio::test]
async fn components_of_every_supported_contract_load_side_by_side() {
    use kaizen_hooks::{HookAction, HookEvent};
    let h = Harness::new();
    let engine = h.host.engine().engine();
    let exports = |name: &str| -> Vec<String> {
        let bytes = std::fs::read(kaizen_test_artifacts::wasm(name)).unwrap();
        let component = wasmtime::component::Component::new(engine, &bytes).unwrap();
        component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_string())
            .collect()
    };
    // py-echo and py-hook are built against wit/v0.1.0, contract-0-1-1
    // against wit/v0.1.1, guard-hook and hello with the SDK against the
    // newest.
    let newest = kaizen_plugin_host::CONTRACT_VERSION;
    for (name, export) in [
        ("py-echo", "kaizen:plugin/tools@0.1.0".to_string()),
        ("py-hook", "kaizen:plugin/hooks@0.1.0".to_string()),
        ("contract-0-1-1", "kaizen:plugin/hooks@0.1.1".to_string()),
        ("guard-hook", format!("kaizen:plugin/hooks@{newest}")),
        ("hello", format!("kaizen:plugin/tools@{newest}")),
    ] {
        assert!(exports(name).contains(&export), "{name}: {export}");
        let version = export.rsplit_once('@').unwrap().1;
        assert_eq!(h.load(name).await.contract, version, "{name}");
    }

    let registry = h.registry(&["py-echo", "contract-0-1-1", "hello"]).await;
    let ctx = h.ctx("side-by-side");
    assert!(text(registry.call(&ctx, "PyEcho", r#"{"text":"hi"}"#).await).contains("hi"));
    assert_eq!(
        text(registry.call(&ctx, "Legacy", r#"{"text":"hi"}"#).await),
        "0.1.1 says hi"
    );
    assert_eq!(
        text(registry.call(&ctx, "Greet", r#"{"name":"v"}"#).await),
        "Hello, v!"
    );

    for name in ["py-hook", "guard-hook"] {
        let plugin = h.load(name).await;
        let hook = plugin
            .hook_handle(kaizen_plugin_host::HookSettings::default())
            .unwrap_or_else(|| panic!("{name} is a hook"));
        assert!(
            hook.subscriptions()
                .iter()
                .any(|sub| sub.event == HookEvent::PreToolUse),
            "{name}"
        );
        // Without the marker file the test hooks carry on.
        let payload = serde_json::json!({"cwd": "/nonexistent", "tool_name": "Bash", "tool_input": {"command": "echo hi"}});
        let decision = hook.handle(HookEvent::PreToolUse, &payload).await.unwrap();
        assert_eq!(decision.action, HookAction::Continue, "{name}");
    }

    // A 0.1.1 hook gets the events and decision fields 0.1.1 added.
    let legacy = h.load("contract-0-1-1").await;
    let hook = legacy
        .hook_handle(kaizen_plugin_host::HookSettings::default())
        .unwrap();
    let payload = serde_json::json!({"cwd": "/nonexistent"});
    let started = hook
        .handle(HookEvent::SubagentStart, &payload)
        .await
        .unwrap();
    assert_eq!(
        started.system_message.as_deref(),
        Some("a sub-agent starts (seen by 0.1.1)")
    );
    let used = hook.handle(HookEvent::PostToolUse, &payload).await.unwrap();
    assert_eq!(used.updated_output.as_deref(), Some("[replaced by 0.1.1]"));
}

#[tokio::test]
async fn an_unknown_version_is_refused_naming_the_supported_ones() {
    let h = Harness::new();
    // The newest contract under a version no host has.
    let wit = h.scratch.path().join("wit-v0.9.0");
    std::fs::create_dir_all(&wit).unwrap();
    let newest = kaizen_plugin_host::CONTRACT_VERSION;
    for entry in std::fs::read_dir(contract_wit(newest)).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap().replace(
            &format!("package kaizen:plugin@{newest};"),
            "package kaizen:plugin@0.9.0;",
        );
        std::fs::write(wit.join(path.file_name().unwrap()), text).unwrap();
    }
    let body = "include kaizen:plugin/tool@0.9.0;";
    let dir = dummy_plugin(&h, "future", &wit, body, &[], "kinds = [\"tool\"]");
    let err = h.load_dir(&dir).await.err().expect("must not load");
    assert!(err.message.contains("kaizen:plugin/"), "{err}");
    assert!(err.message.contains("@0.9.0"), "{err}");
    for version in kaizen_plugin_host::SUPPORTED_CONTRACTS {
        assert!(err.message.contains(version), "{err}");
    }
    assert!(err.message.contains(&format!("wit/v{newest}")), "{err}");
}

#[tokio::test]
async fn llm_drafts_are_refused_and_the_stable_llm_loads_when_granted() {
    let mut h = Harness::new();
    for (version, features) in [
        ("0.1.1", &[][..]),
        ("0.1.2", &["llm"][..]),
        ("0.1.3", &[][..]),
    ] {
        let name = format!("llm-{}", version.replace('.', "-"));
        let body =
            format!("include kaizen:plugin/tool@{version};\nimport kaizen:plugin/llm@{version};");
        let wit = contract_wit(version);
        let dir = dummy_plugin(&h, &name, &wit, &body, features, "kinds = [\"tool\"]");
        let manifest = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
        let manifest = format!("{manifest}[capabilities]\nllm = true\n");
        std::fs::write(dir.join("plugin.toml"), manifest).unwrap();
        let import = format!("kaizen:plugin/llm@{version}");
        // Requested but not granted: refused, naming the capability.
        let err = h.load_dir(&dir).await.err().expect("must not load");
        assert!(err.message.contains(&import), "{err}");
        assert!(err.message.contains("`llm` capability"), "{err}");
        h.policy.grants.insert(
            name,
            kaizen_plugin_host::Capabilities {
                llm: true,
                ..Default::default()
            },
        );
        let loaded = h.load_dir(&dir).await;
        if version == "0.1.3" {
            // The dummy's `tools` traps, so it loads as far as asking for
            // them: the import itself was linked.
            let err = loaded.err().expect("the dummy traps in `tools`");
            assert!(err.message.contains("listing the tools failed"), "{err}");
        } else {
            // Granted, and still refused: the drafts were never provided.
            let err = loaded.err().expect("must not load");
            assert!(err.message.contains(&import), "{err}");
            assert!(err.message.contains("unstable draft"), "{err}");
            let newest = format!("wit/v{}", kaizen_plugin_host::CONTRACT_VERSION);
            assert!(err.message.contains(&newest), "{err}");
        }
    }
}

#[tokio::test]
async fn planners_load_since_planning_is_stable_and_drafts_are_refused() {
    let h = Harness::new();
    for (version, features) in [("0.1.2", &["planning"][..]), ("0.1.4", &[][..])] {
        let name = format!("planner-{}", version.replace('.', "-"));
        let body = format!("include kaizen:plugin/planner@{version};");
        let wit = contract_wit(version);
        let kinds = "kinds = [\"planner\"]";
        let dir = dummy_plugin(&h, &name, &wit, &body, features, kinds);
        let loaded = h.load_dir(&dir).await;
        if version == "0.1.2" {
            let err = loaded.err().expect("a draft must not load");
            assert!(
                err.message.contains("kaizen:plugin/planning@0.1.2"),
                "{err}"
            );
            assert!(
                err.message.contains("a draft of the planning interface"),
                "{err}"
            );
            let newest = format!("wit/v{}", kaizen_plugin_host::CONTRACT_VERSION);
            assert!(err.message.contains(&newest), "{err}");
        } else {
            let plugin = loaded.unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(plugin.contract, "0.1.4");
            assert!(plugin.planner_handle().is_some());
            assert!(plugin.tool_handles().is_empty());
        }
    }
}
