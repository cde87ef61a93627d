//! The `kaizen` binary as a user runs it: plugin listings with grants,
//! inspection, tool listings and direct tool calls, against the real test
//! plugins.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

struct Env {
    home: TempDir,
    workspace: TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
        }
    }

    fn kaizen(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_kaizen"))
            .args(args)
            .env("KAIZEN_HOME", self.home.path())
            // One compile cache for all tests: compiling the Python plugin
            // takes seconds, and the cache is safe to share.
            .env("KAIZEN_CACHE_DIR", common::cache_dir())
            .env_remove("KAIZEN_LOG")
            .current_dir(self.workspace.path())
            .output()
            .unwrap()
    }

    /// `kaizen ARGS --plugins <test plugins>`.
    fn with_plugins(&self, args: &[&str]) -> Output {
        let root = kaizen_test_artifacts::plugins_root()
            .to_str()
            .unwrap()
            .to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--plugins", &root]);
        self.kaizen(&all)
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn plugin<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing from {list:#}"))
}

#[test]
fn plugins_list_shows_requests_grants_and_refusals() {
    let env = Env::new();
    let list = json(&env.with_plugins(&["plugins", "list", "--json"]));

    let hello = plugin(&list, "hello");
    assert_eq!(hello["status"], "loaded");
    assert_eq!(hello["tools"], serde_json::json!(["Greet", "Add"]));

    let fs = plugin(&list, "fs-probe");
    let workspace = env.workspace.path().canonicalize().unwrap();
    assert_eq!(fs["requested"]["filesystem"][0]["path"], "$WORKSPACE");
    assert_eq!(
        fs["granted"]["filesystem"][0]["path"],
        workspace.to_str().unwrap()
    );
    assert_eq!(fs["granted"]["filesystem"][0]["access"], "read-write");

    let process = plugin(&list, "needs-process");
    assert_eq!(process["status"], "failed");
    let error = process["error"].as_str().unwrap();
    assert!(error.contains("`process` capability"), "{error}");
    assert_eq!(process["requested"]["process"]["programs"][0], "true");
    assert_eq!(process["granted"]["denied"][0], "process: not granted");

    let http = plugin(&list, "http-probe");
    assert_eq!(http["status"], "failed");
    assert!(
        http["error"]
            .as_str()
            .unwrap()
            .contains("`http` capability")
    );
}

#[test]
fn project_config_grants_capabilities_once_trusted() {
    let env = Env::new();
    std::fs::write(
        env.workspace.path().join("kaizen.toml"),
        "[grants.http-probe]\nhttp = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let list = json(&env.with_plugins(&["plugins", "list", "--json"]));
    let http = plugin(&list, "http-probe");
    assert_eq!(http["status"], "failed", "not trusted yet: {http:#}");
    let trusted = Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .arg("trust")
        .arg(env.workspace.path())
        .env("KAIZEN_HOME", env.home.path())
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    let list = json(&env.with_plugins(&["plugins", "list", "--json"]));
    let http = plugin(&list, "http-probe");
    assert_eq!(http["status"], "loaded", "{http:#}");
    assert_eq!(http["granted"]["http"], serde_json::json!(["127.0.0.1"]));

    let text = stdout(&env.with_plugins(&["plugins", "list"]));
    assert!(text.contains("http-probe 0.1.0"), "{text}");
    assert!(text.contains("granted:   http 127.0.0.1"), "{text}");
    assert!(text.contains("needs-process  FAILED"), "{text}");
    assert!(text.contains("refused:   process: not granted"), "{text}");
}

/// A broken `kaizen.toml` is reported with its path and the fault. In a
/// workspace that is not trusted it is a note and nothing of it applies (a
/// program of a session could have written it, and it must not stop
/// Kaizen); once trusted, it is an error.
#[test]
fn a_broken_config_file_is_reported_with_its_path() {
    let env = Env::new();
    std::fs::write(
        env.workspace.path().join("kaizen.toml"),
        "[grants.x]\nhttp = [\"ftp://nope\"]\n",
    )
    .unwrap();
    let out = env.with_plugins(&["plugins", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for out in [&out, &{
        let trusted = env.kaizen(&["trust"]);
        assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
        let out = env.with_plugins(&["plugins", "list"]);
        assert_eq!(out.status.code(), Some(1));
        out
    }] {
        let err = stderr(out);
        assert!(err.contains("kaizen.toml"), "{err}");
        assert!(err.contains("[grants.x]"), "{err}");
        assert!(err.contains("scheme"), "{err}");
    }
}

#[test]
fn tools_list_merges_every_plugin() {
    let env = Env::new();
    let tools = json(&env.with_plugins(&["tools", "list", "--json"]));
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in ["Greet", "Add", "Count", "FsProbe", "PyEcho", "Spin"] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    let greet = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Greet")
        .unwrap();
    assert_eq!(greet["plugin"], "hello");
    assert_eq!(greet["read_only"], true);
    // Each tool's danger level: the code's, or the manifest's [danger].
    let danger = |name: &str| {
        let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == name);
        tool.unwrap()["danger"].as_str().unwrap().to_string()
    };
    assert_eq!(
        ["Greet", "Add", "Bash", "KillShell", "Edit"].map(danger),
        ["safe", "low", "high", "low", "medium"]
    );
    assert_eq!(
        greet["input_schema"]["required"],
        serde_json::json!(["name"])
    );

    let text = env.with_plugins(&["tools", "list"]);
    let add = stdout(&text);
    let add = add.lines().find(|line| line.starts_with("Add ")).unwrap();
    assert!(add.contains("(hello)") && add.contains(" LOW "), "{add}");
    // Plugins that failed to load are named on stderr, not silently dropped.
    assert!(stderr(&text).contains("needs-process"), "{}", stderr(&text));
}

#[test]
fn inspect_shows_the_world_and_schemas_without_granting_anything() {
    let env = Env::new();
    let dir = kaizen_test_artifacts::plugin_dir("needs-process");
    let report = json(&env.kaizen(&["plugins", "inspect", dir.to_str().unwrap(), "--json"]));
    let imports: Vec<&str> = report["imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    let version = kaizen_plugin_host::CONTRACT_VERSION;
    let process = format!("kaizen:plugin/process@{version}");
    assert!(imports.contains(&process.as_str()), "{imports:?}");
    assert_eq!(
        report["exports"][0],
        format!("kaizen:plugin/tools@{version}")
    );
    assert_eq!(report["tools"][0]["name"], "Run");
    assert_eq!(report["manifest"]["name"], "needs-process");

    let wasm = kaizen_test_artifacts::wasm("hello");
    let text = stdout(&env.kaizen(&["plugins", "inspect", wasm.to_str().unwrap()]));
    assert!(text.contains("tool Greet [read-only]"), "{text}");
    assert!(text.contains("\"name\""), "{text}");

    // A component that imports `session` (always granted) lists its tools.
    let notes = kaizen_test_artifacts::plugin_dir("notes");
    let report = json(&env.kaizen(&["plugins", "inspect", notes.to_str().unwrap(), "--json"]));
    assert!(report["tools_error"].is_null(), "{report:#}");
    assert!(
        !report["tools"].as_array().unwrap().is_empty(),
        "{report:#}"
    );

    let missing = env.kaizen(&["plugins", "inspect", "/no/such/plugin"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("does not exist"));
}

#[test]
fn tools_call_runs_a_tool_and_reports_failures() {
    let env = Env::new();
    let out = env.with_plugins(&["tools", "call", "Greet", r#"{"name":"CLI"}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello, CLI!\n");

    let out = env.with_plugins(&["tools", "call", "Greet", r#"{"nom":"x"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("do not match its input schema"),
        "{}",
        stderr(&out)
    );

    let out = env.with_plugins(&["tools", "call", "Panic", "{}", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(err["kind"], "crashed");

    // Files go through the workspace grant.
    std::fs::write(env.workspace.path().join("in.txt"), "from the workspace").unwrap();
    let out = env.with_plugins(&[
        "tools",
        "call",
        "FsProbe",
        r#"{"op":"read","path":"in.txt"}"#,
    ]);
    assert_eq!(stdout(&out), "from the workspace\n", "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new();
    let out = env.kaizen(&["plugins", "list", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(Path::new(env!("CARGO_BIN_EXE_kaizen")).exists());
}

#[test]
fn tools_call_enforces_the_time_limit() {
    let env = Env::new();
    // The hostile plugin with a half-second limit, from a directory of its own.
    let dir = env.home.path().join("plugins").join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        kaizen_test_artifacts::wasm("hostile"),
        dir.join("hostile.wasm"),
    )
    .unwrap();
    let manifest =
        std::fs::read_to_string(kaizen_test_artifacts::plugin_dir("hostile").join("plugin.toml"))
            .unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        format!("{manifest}\n[limits]\ncpu-seconds = 0.5\n"),
    )
    .unwrap();
    let out = env.kaizen(&["tools", "call", "Spin", "{}"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("time limit of 500 ms"),
        "{}",
        stderr(&out)
    );
}

/// A copy of the `hello` test plugin in a directory of its own, the way an
/// author's built plugin looks.
fn hello_copy(env: &Env) -> std::path::PathBuf {
    let dir = env.workspace.path().join("src-hello");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(kaizen_test_artifacts::plugin_dir("hello")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir
}

/// The component file of an installed or copied plugin directory.
fn component_of(dir: &Path) -> std::path::PathBuf {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(dir.join("plugin.toml")).unwrap()).unwrap();
    let name = manifest["plugin"]["component"]
        .as_str()
        .unwrap_or("hello.wasm");
    dir.join(name)
}

#[test]
fn plugins_add_pins_a_plugin_and_a_tampered_one_is_refused_until_added_again() {
    let env = Env::new();
    let source = hello_copy(&env);
    let source_arg = source.to_str().unwrap();
    let out = env.kaizen(&["plugins", "add", source_arg]);
    assert!(out.status.success(), "{}", stderr(&out));
    let added = stdout(&out);
    assert!(added.contains("added hello"), "{added}");
    assert!(added.contains("component blake3:"), "{added}");

    let installed = env.home.path().join("plugins").join("hello");
    let lock = env.home.path().join("plugins").join("plugins.lock");
    assert!(lock.is_file());
    let out = env.kaizen(&["tools", "call", "Greet", r#"{"name":"Ada"}"#]);
    assert_eq!(stdout(&out).trim(), "Hello, Ada!", "{}", stderr(&out));
    let list = json(&env.kaizen(&["plugins", "list", "--json"]));
    assert_eq!(plugin(&list, "hello")["pinned_by"], lock.to_str().unwrap());

    // Someone changes the installed component.
    let wasm = component_of(&installed);
    let mut bytes = std::fs::read(&wasm).unwrap();
    bytes.extend_from_slice(&[0, 1, 0]);
    std::fs::write(&wasm, &bytes).unwrap();
    let list = json(&env.kaizen(&["plugins", "list", "--json"]));
    let hello = plugin(&list, "hello");
    assert_eq!(hello["status"], "failed");
    let error = hello["error"].as_str().unwrap();
    assert!(error.contains("it changed since"), "{error}");
    assert_eq!(error.matches("blake3:").count(), 2, "{error}");
    let out = env.kaizen(&["tools", "call", "Greet", r#"{"name":"Ada"}"#]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("it changed since"),
        "{}",
        stderr(&out)
    );

    // A plugin dropped into the directory by hand is not in the lock.
    let stray = env.home.path().join("plugins").join("stray");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(
        stray.join("plugin.toml"),
        std::fs::read_to_string(source.join("plugin.toml"))
            .unwrap()
            .replace("name = \"hello\"", "name = \"stray\""),
    )
    .unwrap();
    let list = json(&env.kaizen(&["plugins", "list", "--json"]));
    let error = plugin(&list, "stray")["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("is not listed in"), "{error}");
    std::fs::remove_dir_all(&stray).unwrap();

    // Added again, it loads; removed, it is gone with its entry.
    let out = env.kaizen(&["plugins", "add", source_arg]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.kaizen(&["tools", "call", "Greet", r#"{"name":"Ada"}"#]);
    assert_eq!(stdout(&out).trim(), "Hello, Ada!", "{}", stderr(&out));
    let out = env.kaizen(&["plugins", "remove", "hello"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!installed.exists());
    assert!(
        !std::fs::read_to_string(&lock)
            .unwrap()
            .contains("[plugins.hello]")
    );
    let out = env.kaizen(&["plugins", "remove", "hello"]);
    assert!(
        stderr(&out).contains("no plugin `hello`"),
        "{}",
        stderr(&out)
    );

    // Not a plugin directory, or not built.
    let out = env.kaizen(&["plugins", "add", env.workspace.path().to_str().unwrap()]);
    assert!(
        stderr(&out).contains("has no plugin.toml"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(component_of(&source)).unwrap();
    let out = env.kaizen(&["plugins", "add", source_arg]);
    assert!(
        stderr(&out).contains("build the plugin first"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_signature_policy_refuses_unsigned_plugins_and_only_the_user_sets_it() {
    let env = Env::new();
    let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!(
            "[plugins]\nrequire-signature = true\ntrusted-keys = [\"{}\"]\n",
            keys.pk.to_base64()
        ),
    )
    .unwrap();
    let source = hello_copy(&env);
    let source_arg = source.to_str().unwrap();
    let out = env.kaizen(&["plugins", "add", source_arg]);
    assert!(stderr(&out).contains("is not signed"), "{}", stderr(&out));

    let wasm = component_of(&source);
    let signature = minisign::sign(
        Some(&keys.pk),
        &keys.sk,
        std::fs::File::open(&wasm).unwrap(),
        None,
        None,
    )
    .unwrap();
    std::fs::write(
        kaizen_plugin_host::signature_path(&wasm),
        signature.into_string(),
    )
    .unwrap();
    let out = env.kaizen(&["plugins", "add", source_arg]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("signed:   by {}", keys.pk.to_base64())));
    let list = json(&env.kaizen(&["plugins", "list", "--json"]));
    assert_eq!(plugin(&list, "hello")["signed_by"], keys.pk.to_base64());

    // An unsigned plugin from --plugins is refused under the policy.
    let list = json(&env.with_plugins(&["plugins", "list", "--json"]));
    let error = plugin(&list, "counter")["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("is not signed"), "{error}");

    // A workspace cannot name keys to trust.
    std::fs::write(
        env.workspace.path().join("kaizen.toml"),
        "[plugins]\ntrusted-keys = [\"RWQ\"]\n",
    )
    .unwrap();
    let out = env.kaizen(&["plugins", "list"]);
    assert!(
        stderr(&out).contains("which keys to trust is set in the user's config only"),
        "{}",
        stderr(&out)
    );

    // Keys that are not keys, or a policy no plugin could meet.
    std::fs::write(
        env.home.path().join("config.toml"),
        "[plugins]\nrequire-signature = true\n",
    )
    .unwrap();
    let out = env.kaizen(&["plugins", "list"]);
    assert!(
        stderr(&out).contains("trusted-keys is empty"),
        "{}",
        stderr(&out)
    );
}
