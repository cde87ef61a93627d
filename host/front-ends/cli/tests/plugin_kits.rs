//! A plugin written in each language the way a newcomer would from
//! docs/writing-plugins.md: `kaizen plugins new`, `plugins test`,
//! `plugins build`, then its tool called directly and by the model
//! through `kaizen run` on the scripted model server. And the mistakes `plugins build` catches, each
//! with its fix.
//!
//! The kits' toolchains (componentize-py, jco, ...) install once under the
//! target directory, and Rust projects share one target directory, so a
//! second run costs only the builds.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::session::Session;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where the kits' toolchains and the Rust projects' builds are kept
/// between runs.
fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// `kaizen ARGS` in `dir`, with its state in `home`.
fn kaizen(home: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(args)
        .current_dir(dir)
        .env("KAIZEN_HOME", home)
        .env("KAIZEN_CACHE_DIR", common::cache_dir())
        .env("KAIZEN_TOOLCHAINS_DIR", common::toolchains_dir())
        .env("CARGO_TARGET_DIR", shared("kit-projects"))
        .env_remove("KAIZEN_LOG")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn succeeded(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\nstdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

/// A project of `lang` named word-count, written, tested and built.
struct Built {
    home: tempfile::TempDir,
    workspace: tempfile::TempDir,
    project: PathBuf,
}

impl Built {
    fn new(lang: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let out = kaizen(
            home.path(),
            workspace.path(),
            &["plugins", "new", "word-count", "--lang", lang],
        );
        let created = succeeded(&out, "plugins new");
        assert!(created.contains("kaizen plugins build"), "{created}");
        let project = workspace.path().join("word-count");
        let built = Self {
            home,
            workspace,
            project,
        };
        succeeded(&built.kaizen(&["plugins", "test"]), "plugins test");
        let out = built.kaizen(&["plugins", "build"]);
        let report = succeeded(&out, "plugins build");
        assert!(report.contains("tool WordCount"), "{report}");
        assert!(report.contains("loads as a session would"), "{report}");
        built
    }

    fn kaizen(&self, args: &[&str]) -> Output {
        kaizen(self.home.path(), &self.project, args)
    }

    /// `tools call --json` of WordCount on `input`.
    fn call(&self, input: Value) -> Value {
        let out = self.kaizen(&[
            "tools",
            "call",
            "--plugins",
            ".",
            "--json",
            "WordCount",
            &input.to_string(),
        ]);
        serde_json::from_str(&succeeded(&out, "tools call")).unwrap()
    }

    /// WordCount called by the model in a `kaizen run` session.
    async fn run(&self, input: Value) -> String {
        let mut session = Session::new(self.home.path(), self.workspace.path());
        session.args = vec![
            "--plugins".into(),
            self.project.to_string_lossy().into_owned(),
        ];
        let run = session.run(&[("WordCount", input)]).await;
        assert!(run.output.status.success(), "{}", stderr(&run.output));
        run.results[0].clone()
    }
}

/// Counting "one two\nthree" with each kit's template: its metadata, its
/// text through `kaizen run`, and a failure the tool reports.
async fn counts_a_text(lang: &str) -> Built {
    let built = Built::new(lang);
    // The new project's manifest names the contract this kaizen provides.
    let manifest = std::fs::read_to_string(built.project.join("plugin.toml")).unwrap();
    let contract = format!("contract = \"{}\"", kaizen_plugin_host::CONTRACT_VERSION);
    assert!(manifest.contains(&contract), "{manifest}");
    let result = built.call(json!({"text": "one two\nthree"}));
    let metadata = &result["metadata"];
    assert_eq!(metadata["words"], 3, "{result:#}");
    assert_eq!(metadata["lines"], 2, "{result:#}");
    assert_eq!(metadata["characters"], 13, "{result:#}");
    let seen = built.run(json!({"text": "a b c d"})).await;
    assert!(seen.contains('4'), "{seen}");
    built.fails(r#"{"text": ""}"#, "empty");
    built
}

impl Built {
    /// WordCount on `input` fails, saying `why`.
    fn fails(&self, input: &str, why: &str) {
        let out = self.kaizen(&["tools", "call", "--plugins", ".", "WordCount", input]);
        assert!(!out.status.success(), "{}", stdout(&out));
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
    }
}

#[tokio::test]
async fn a_python_plugin_from_new_to_run() {
    counts_a_text("python").await;
}

#[tokio::test]
async fn a_javascript_plugin_from_new_to_run() {
    counts_a_text("js").await;
}

/// The C template counts a file (like `wc`), in the workspace it is
/// granted.
#[tokio::test]
async fn a_c_plugin_from_new_to_run() {
    let built = Built::new("c");
    std::fs::write(built.project.join("sample.txt"), "one two\nthree").unwrap();
    let result = built.call(json!({"path": "sample.txt"}));
    let metadata = &result["metadata"];
    assert_eq!(metadata["words"], 3, "{result:#}");
    assert_eq!(metadata["lines"], 1, "{result:#}");
    assert_eq!(metadata["bytes"], 13, "{result:#}");
    let seen = built.run(json!({"path": "word-count/sample.txt"})).await;
    assert!(seen.contains("3 words"), "{seen}");
    built.fails(r#"{"path": "missing.txt"}"#, "No such file");
}

/// The Rust kit's template, then the mistakes a build must catch, each
/// rebuilt from the same project.
#[tokio::test]
async fn a_rust_plugin_from_new_to_run_and_build_errors_that_name_the_fix() {
    let built = counts_a_text("rust").await;
    let lib = built.project.join("src/lib.rs");
    let manifest = built.project.join("plugin.toml");
    let source = std::fs::read_to_string(&lib).unwrap();
    let plugin_toml = std::fs::read_to_string(&manifest).unwrap();
    // The build's error once `file` holds `original` with `from` made `to`.
    let build_error = |file: &Path, original: &str, from: &str, to: &str, what: &str| {
        assert!(original.contains(from), "{what}: the template changed");
        std::fs::write(file, original.replace(from, to)).unwrap();
        let out = built.kaizen(&["plugins", "build"]);
        assert!(!out.status.success(), "{what}: the build should fail");
        stderr(&out)
    };

    // A tool named like a built-in.
    let err = build_error(
        &lib,
        &source,
        "const NAME: &'static str = \"WordCount\"",
        "const NAME: &'static str = \"Read\"",
        "a name clash",
    );
    assert!(
        err.contains("tool `Read` is provided by both `read` and `word-count`"),
        "{err}"
    );

    // A schema the host cannot compile.
    let err = build_error(
        &lib,
        &source,
        "    /// The text to count.\n",
        "    /// The text to count.\n    #[schemars(extend(\"pattern\" = \"(\"))]\n",
        "a bad schema",
    );
    assert!(err.contains("schema"), "{err}");

    // An import the manifest does not request.
    let err = build_error(
        &lib,
        &source,
        "        if input.text.is_empty() {",
        "        let _ = kaizen_sdk::host::process::run(&kaizen_sdk::host::process::Command { program: \"true\".into(), args: Vec::new(), cwd: None, env: Vec::new(), stdin: None, timeout_ms: None });\n        if input.text.is_empty() {",
        "an import not requested",
    );
    assert!(err.contains("kaizen:plugin/process"), "{err}");
    assert!(err.contains("[capabilities]"), "{err}");

    // The manifest promises a kind the component does not export.
    std::fs::write(&lib, &source).unwrap();
    let err = build_error(
        &manifest,
        &plugin_toml,
        "kinds = [\"tool\"]",
        "kinds = [\"tool\", \"hook\"]",
        "a missing export",
    );
    assert!(err.contains("kaizen:plugin/hooks"), "{err}");
    assert!(err.contains("hook"), "{err}");

    // Not a project at all.
    let out = kaizen(
        built.home.path(),
        built.workspace.path(),
        &["plugins", "build"],
    );
    assert!(
        stderr(&out).contains("kaizen plugins new"),
        "{}",
        stderr(&out)
    );
    let out = kaizen(
        built.home.path(),
        built.workspace.path(),
        &["plugins", "new", "Bad_Name", "--lang", "rust"],
    );
    assert!(
        stderr(&out).contains("cannot name a plugin"),
        "{}",
        stderr(&out)
    );
}

/// The repository (the kits are under `sdk/`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The newest contract in full, as the kits ship it (the repository's
/// `wit/vX.Y.Z` holds only what changed since the version before), in
/// the kits written out under `root`.
fn shipped_contract(root: &Path) -> PathBuf {
    kaizen_app::kits::embedded::extracted(root)
        .unwrap()
        .join(format!("wit/v{}", kaizen_plugin_host::CONTRACT_VERSION))
}

/// Runs a kit's own test command, which must succeed.
fn kit_tests(cmd: &mut Command, what: &str) {
    let out = cmd
        .current_dir(repo())
        .output()
        .unwrap_or_else(|err| panic!("{what}: cannot run {:?}: {err}", cmd.get_program()));
    succeeded(&out, what);
}

#[test]
fn the_python_kit_passes_its_own_tests() {
    let kits = tempfile::tempdir().unwrap();
    kit_tests(
        Command::new("python3")
            .args(["-m", "unittest", "discover", "-s", "sdk/python/tests"])
            // No __pycache__ under sdk/: the build embeds that tree and
            // would run again.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("KAIZEN_CONTRACT_WIT", shipped_contract(kits.path())),
        "the Python kit's tests",
    );
}

/// The built-in planner written in Python, natively, as `kaizen plugins
/// test` runs it.
#[test]
fn the_python_built_in_passes_its_own_tests() {
    kit_tests(
        Command::new("python3")
            .args([
                "-m",
                "unittest",
                "discover",
                "-s",
                "plugins/self-consistency",
            ])
            .env("PYTHONPATH", repo().join("sdk/python"))
            .env("PYTHONDONTWRITEBYTECODE", "1"),
        "the self-consistency planner's tests",
    );
}

#[test]
fn the_javascript_kit_passes_its_own_tests_and_type_checks() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
    let tsc = kaizen_test_support::npm::install(&root, "typescript", &["typescript@5.9.3"])
        .join("node_modules/typescript/bin/tsc");
    kit_tests(
        Command::new("node")
            .args(["--test", "sdk/js/tests/"])
            .env("KAIZEN_JS_TSC", tsc),
        "the JavaScript kit's tests",
    );
}

/// The C kit's JSON, call and ABI tests, under the sanitizers where the
/// compiler has them; the ABI test uses the bindings `plugins build`
/// generates (the same generator and options).
#[test]
fn the_c_kit_passes_its_own_tests() {
    let bindings = tempfile::tempdir().unwrap();
    let kits = tempfile::tempdir().unwrap();
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_path(shipped_contract(kits.path())).unwrap();
    let world = resolve.select_world(&[package], Some("tool")).unwrap();
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts {
        rename_world: Some("kaizen_world".into()),
        no_object_file: true,
        ..Default::default()
    }
    .build()
    .generate(&mut resolve, world, &mut files)
    .unwrap();
    for (name, bytes) in files.iter() {
        std::fs::write(bindings.path().join(name), bytes).unwrap();
    }
    kit_tests(
        Command::new("bash")
            .arg("sdk/c/tests/run.sh")
            .env("BINDINGS_DIR", bindings.path())
            .env("OUT_DIR", bindings.path().join("out")),
        "the C kit's tests",
    );
}

/// A hook in Python, with the kit: `plugins build` builds and checks it,
/// and in a real `kaizen run` it denies one Bash call and rewrites another.
#[tokio::test]
async fn a_python_hook_denies_and_rewrites_bash_calls_in_a_run() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let project = workspace.path().join("no-rm");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("plugin.toml"),
        "[plugin]\nname = \"no-rm\"\nversion = \"0.1.0\"\nkinds = [\"hook\"]\n",
    )
    .unwrap();
    std::fs::write(
        project.join("app.py"),
        r#"from kaizen_sdk import Decision, hook


@hook("PreToolUse", matcher="Bash")
def no_rm(payload):
    command = payload["tool_input"]["command"]
    if "rm -rf" in command:
        return Decision.deny("no-rm: rm -rf is not allowed here")
    if command.startswith("echo "):
        return Decision.allow(updated_input={"command": command + " again"})
    return None
"#,
    )
    .unwrap();
    let report = succeeded(
        &kaizen(home.path(), &project, &["plugins", "build"]),
        "plugins build",
    );
    assert!(report.contains("hooks: 1 subscription"), "{report}");
    let list = succeeded(
        &kaizen(
            home.path(),
            &project,
            &["plugins", "list", "--json", "--plugins", "."],
        ),
        "plugins list",
    );
    let list: Value = serde_json::from_str(&list).unwrap();
    let plugin = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "no-rm")
        .unwrap();
    assert_eq!(plugin["hooks"], json!(["PreToolUse(Bash)"]), "{plugin:#}");

    let mut session = Session::new(home.path(), workspace.path());
    session.args = vec!["--plugins".into(), project.to_string_lossy().into_owned()];
    let run = session
        .run(&[
            ("Bash", json!({"command": "rm -rf build"})),
            ("Bash", json!({"command": "echo hi"})),
        ])
        .await;
    assert!(
        run.results[0].contains("no-rm: rm -rf is not allowed here"),
        "{}",
        run.results[0]
    );
    assert!(run.results[1].contains("hi again"), "{}", run.results[1]);
    let statuses: Vec<&Value> = run.result["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| &call["status"])
        .collect();
    assert_eq!(statuses, [&json!("denied"), &json!("success")]);
}
