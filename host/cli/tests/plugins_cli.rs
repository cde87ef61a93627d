//! The `kaizen` binary as a user runs it: plugin listings with grants,
//! inspection, tool listings and direct tool calls, against the real test
//! plugins.

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

#[test]
fn a_broken_config_file_is_reported_with_its_path() {
    let env = Env::new();
    std::fs::write(
        env.workspace.path().join("kaizen.toml"),
        "[grants.x]\nhttp = [\"ftp://nope\"]\n",
    )
    .unwrap();
    let out = env.with_plugins(&["plugins", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("kaizen.toml"), "{err}");
    assert!(err.contains("[grants.x]"), "{err}");
    assert!(err.contains("scheme"), "{err}");
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
    assert_eq!(
        greet["input_schema"]["required"],
        serde_json::json!(["name"])
    );

    let text = env.with_plugins(&["tools", "list"]);
    assert!(stdout(&text).contains("Greet"));
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
    assert!(
        imports.contains(&"kaizen:plugin/process@0.1.1"),
        "{imports:?}"
    );
    assert_eq!(report["exports"][0], "kaizen:plugin/tools@0.1.1");
    assert_eq!(report["tools"][0]["name"], "Run");
    assert_eq!(report["manifest"]["name"], "needs-process");

    let wasm = kaizen_test_artifacts::wasm("hello");
    let text = stdout(&env.kaizen(&["plugins", "inspect", wasm.to_str().unwrap()]));
    assert!(text.contains("tool Greet [read-only]"), "{text}");
    assert!(text.contains("\"name\""), "{text}");

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
