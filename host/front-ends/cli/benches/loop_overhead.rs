//! Host overhead per loop cycle, measured through the real product: the
//! `kaizen` binary, real OpenAI-wire HTTP to a zero-latency scripted model
//! server (no pacing) running in this process, and a real tool plugin (the
//! test plugin `counter`'s `Noop` tool, stateful and trivial).
//!
//! A run of N cycles is N tool-call turns then a final text reply. The
//! per-cycle overhead is (median(T_200) − median(T_0)) / 200, which removes
//! the fixed start-up cost (process start, plugin load, first request).
//! Also measured: the kaizen process's CPU time (user+sys, from `wait4`)
//! and peak RSS (`ru_maxrss`), this process's CPU time during the run (the
//! model server, plus spawning), and the budgets' session shape (10 tool
//! calls, 11 model turns) with the built-in `Bash` running `true` in the
//! OS sandbox. Prints medians against docs/budgets.md; asserts nothing
//! about time.
//!
//! Run with `cargo bench -p kaizen --bench loop_overhead`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{
    cpu_of, exited_ok, load_average, median, mib, ms, reset_peak_rss, self_cpu, spawn, wait4,
};
use kaizen_model_server::{ModelServer, Options, Reply, Script};
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "sk-bench-key-0123456789";
const REPS: usize = 5;
const LONG: usize = 200;
/// The budgets' session: 10 tool calls and 11 model turns.
const SESSION: usize = 10;
const CYCLE_BUDGET: Duration = Duration::from_millis(1);
const SESSION_WALL_BUDGET: Duration = Duration::from_millis(150);
const SESSION_CPU_BUDGET: Duration = Duration::from_millis(120);
const SESSION_RSS_BUDGET_MIB: f64 = 60.0;

/// One `kaizen run`.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    /// The kaizen process: user + system CPU time.
    cpu: Duration,
    /// The kaizen process: peak resident set size, in KiB.
    max_rss_kib: u64,
    /// This process's resident set size when it spawned kaizen, in KiB: a
    /// floor under `max_rss_kib` (see [`reset_peak_rss`]).
    floor_kib: u64,
    /// This process (the model server, and spawning the child) during the
    /// run: user + system CPU time.
    server_cpu: Duration,
}

/// N tool-call turns then a final text reply.
fn script(n: usize, plugins: Plugins) -> Script {
    let (tool, input) = plugins.call();
    let mut script = Script::new();
    for _ in 0..n {
        script = script.reply(Reply::tool(tool, input));
    }
    script.reply(Reply::text("done"))
}

/// Which plugins `--plugins` loads (the built-ins always load).
#[derive(Clone, Copy, PartialEq)]
enum Plugins {
    /// Every test plugin that provides tools (the test hooks would add
    /// their own cost to every event: `cargo bench --bench hooks` measures
    /// that).
    All,
    /// Only `counter`.
    Counter,
    /// None: the built-ins alone, calling `Bash` with `true`.
    BuiltinBash,
}

impl Plugins {
    fn dirs(self) -> Vec<PathBuf> {
        match self {
            Plugins::All => kaizen_test_artifacts::PLUGINS
                .iter()
                .filter(|name| !name.ends_with("-hook"))
                .map(|name| kaizen_test_artifacts::plugin_dir(name))
                .collect(),
            Plugins::Counter => vec![kaizen_test_artifacts::plugin_dir("counter")],
            Plugins::BuiltinBash => Vec::new(),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Plugins::All => "all test plugins",
            Plugins::Counter => "counter only",
            Plugins::BuiltinBash => "built-ins, Bash",
        }
    }

    /// The tool each turn calls, and its input.
    fn call(self) -> (&'static str, &'static str) {
        match self {
            Plugins::All | Plugins::Counter => ("Noop", "{}"),
            Plugins::BuiltinBash => ("Bash", r#"{"command":"true"}"#),
        }
    }
}

/// Waits until this process's CPU time stops moving: the previous run's
/// server frees its recorded requests on the tokio worker after it is
/// dropped, which must not be counted in (or compete with) the next run.
fn settle() {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut last = self_cpu();
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = self_cpu();
        if now.saturating_sub(last) < Duration::from_millis(1) || Instant::now() > deadline {
            return;
        }
        last = now;
    }
}

/// Runs `kaizen run` against a fresh no-pace server scripted for `n` tool
/// calls, and checks that it completed them all.
fn run_once(rt: &tokio::runtime::Runtime, n: usize, plugins: Plugins, cache: &Path) -> Sample {
    let server = rt
        .block_on(ModelServer::start_with(
            script(n, plugins),
            Options {
                pace: None,
                ..Options::default()
            },
        ))
        .expect("model server");
    let home = tempfile::tempdir().expect("home");
    let workspace = tempfile::tempdir().expect("workspace");
    let out = tempfile::tempdir().expect("output dir");
    let stdout_path = out.path().join("stdout");
    let stderr_path = out.path().join("stderr");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.arg("run")
        .args(["--model", "gpt-4o", "--output-format", "json"])
        .arg("--max-cycles")
        .arg((n + 1).to_string())
        .args(["--timeout", "300"])
        .arg("--cwd")
        .arg(workspace.path())
        .args(
            plugins
                .dirs()
                .into_iter()
                .flat_map(|dir| ["--plugins".into(), dir.into_os_string()]),
        )
        .arg("Call the tool until told to stop.")
        .env("KAIZEN_HOME", home.path())
        .env("KAIZEN_CACHE_DIR", cache)
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", server.openai_base_url())
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("stdout file"))
        .stderr(File::create(&stderr_path).expect("stderr file"));
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
        "KAIZEN_MODEL",
        "KAIZEN_LOG",
    ] {
        cmd.env_remove(var);
    }

    settle();
    let floor_kib = reset_peak_rss();
    let cpu_before = self_cpu();
    let start = Instant::now();
    let (status, usage) = wait4(spawn(&mut cmd));
    let wall = start.elapsed();
    let server_cpu = self_cpu().saturating_sub(cpu_before);

    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        exited_ok(status),
        "kaizen failed (wait status {status}):\n{stdout}\n{stderr}"
    );
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|err| panic!("not one JSON object ({err}): {stdout}\n{stderr}"));
    let calls = result["tool_calls"].as_array().map_or(0, Vec::len);
    let ok = result["status"] == "complete"
        && result["cycles_used"] == n as u64 + 1
        && calls == n
        && server.remaining() == 0;
    assert!(ok, "unexpected run for N = {n}: {result}\n{stderr}");
    if let Some(failed) = result["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["status"] != "success")
    {
        panic!("a tool call did not succeed: {failed}");
    }
    drop(server);
    Sample {
        wall,
        cpu: cpu_of(&usage),
        max_rss_kib: usage.ru_maxrss as u64,
        floor_kib,
        server_cpu,
    }
}

struct Summary {
    walls: Vec<Duration>,
    wall: Duration,
    cpu: Duration,
    max_rss_kib: u64,
    server_cpu: Duration,
}

fn summarize(samples: &[Sample]) -> Summary {
    Summary {
        walls: samples.iter().map(|s| s.wall).collect(),
        wall: median(samples.iter().map(|s| s.wall)),
        cpu: median(samples.iter().map(|s| s.cpu)),
        max_rss_kib: median(samples.iter().map(|s| s.max_rss_kib)),
        server_cpu: median(samples.iter().map(|s| s.server_cpu)),
    }
}

/// (a − b) / n in milliseconds (negative if a < b).
fn per_cycle_ms(a: Duration, b: Duration, n: usize) -> f64 {
    (a.as_secs_f64() - b.as_secs_f64()) * 1e3 / n as f64
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let cache: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");

    let load_before = load_average();
    // Warm up: fill the compile cache and the page cache.
    run_once(&rt, 0, Plugins::All, &cache);
    run_once(&rt, SESSION, Plugins::All, &cache);
    run_once(&rt, SESSION, Plugins::BuiltinBash, &cache);

    // Interleaved, so that drift on a shared machine hits every case alike.
    let cases = [
        (0, Plugins::All),
        (SESSION, Plugins::All),
        (LONG, Plugins::All),
        (0, Plugins::Counter),
        (SESSION, Plugins::Counter),
        (0, Plugins::BuiltinBash),
        (SESSION, Plugins::BuiltinBash),
    ];
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); cases.len()];
    for _ in 0..REPS {
        for (i, &(n, plugins)) in cases.iter().enumerate() {
            samples[i].push(run_once(&rt, n, plugins, &cache));
        }
    }
    settle();
    let load_after = load_average();
    let summaries: Vec<Summary> = samples.iter().map(|s| summarize(s)).collect();
    let floor_kib = samples
        .iter()
        .flatten()
        .map(|s| s.floor_kib)
        .max()
        .unwrap_or(0);
    // A peak at or under the floor may be this process's, not kaizen's.
    let rss = |kib: u64| {
        let mark = if kib <= floor_kib { "≤" } else { "" };
        format!("{mark}{:.1} MiB", mib(kib))
    };
    let find = |n: usize, plugins: Plugins| {
        let i = cases
            .iter()
            .position(|&c| c == (n, plugins))
            .expect("a measured case");
        &summaries[i]
    };

    println!();
    println!(
        "kaizen loop overhead: `kaizen run` (bench profile), OpenAI wire over loopback HTTP to a \
         zero-latency scripted model server (no pacing) in the bench process, tool: test plugin \
         counter's Noop (stateful, trivial). N tool-call turns + 1 text turn, {REPS} runs each \
         (interleaved), medians. Load average before {load_before}, after {load_after} (a shared \
         machine: walls well above kaizen CPU mean contention)."
    );
    println!();
    println!(
        "{:<8} {:<17} {:>11} {:>40} {:>13} {:>11} {:>14}",
        "run",
        "--plugins",
        "wall median",
        "wall, each run (ms)",
        "kaizen CPU",
        "kaizen peak",
        "bench-process"
    );
    println!(
        "{:<8} {:<17} {:>11} {:>40} {:>13} {:>11} {:>14}",
        "", "", "(ms)", "", "user+sys (ms)", "RSS [2]", "CPU (ms) [1]"
    );
    for (&(n, plugins), s) in cases.iter().zip(&summaries) {
        let each: Vec<String> = s.walls.iter().map(|w| format!("{:.1}", ms(*w))).collect();
        println!(
            "{:<8} {:<17} {:>11.1} {:>40} {:>13.1} {:>11} {:>14.1}",
            format!("N = {n}"),
            plugins.label(),
            ms(s.wall),
            each.join(" "),
            ms(s.cpu),
            rss(s.max_rss_kib),
            ms(s.server_cpu),
        );
    }

    let budget = ms(CYCLE_BUDGET);
    let t0 = find(0, Plugins::All);
    println!();
    println!(
        "per loop cycle = (median(T_N) − median(T_0)) / N, all test plugins (the request history \
         grows every cycle, so longer runs cost more per cycle):"
    );
    println!(
        "{:<36} {:>10} {:>10} {:>16}",
        "", "N = 200", "N = 10", "budget"
    );
    let slope =
        |f: fn(&Summary) -> Duration, n: usize| per_cycle_ms(f(find(n, Plugins::All)), f(t0), n);
    let wall_long = slope(|s| s.wall, LONG);
    println!(
        "{:<36} {:>7.3} ms {:>7.3} ms {:>16}",
        "host overhead, wall",
        wall_long,
        slope(|s| s.wall, SESSION),
        format!("≤ {budget:.0} ms")
    );
    println!(
        "{:<36} {:>7.3} ms {:>7.3} ms",
        "  of which kaizen CPU (user+sys)",
        slope(|s| s.cpu, LONG),
        slope(|s| s.cpu, SESSION)
    );
    println!(
        "{:<36} {:>7.3} ms {:>7.3} ms",
        "  of which bench-process CPU [1]",
        slope(|s| s.server_cpu, LONG),
        slope(|s| s.server_cpu, SESSION)
    );
    println!(
        "host overhead per cycle at N = {LONG}: {wall_long:.3} ms = {:.2}× the {budget:.0} ms budget ({})",
        wall_long / budget,
        if wall_long <= budget {
            "within budget"
        } else {
            "OVER BUDGET"
        }
    );
    println!(
        "fixed start-up (median T_0): {:.1} ms with all test plugins, {:.1} ms with counter only",
        ms(t0.wall),
        ms(find(0, Plugins::Counter).wall)
    );

    println!();
    println!(
        "budget session shape: {SESSION} tool calls + {} model turns; `built-ins, Bash` is the \
         real thing (the built-in Bash running `true` in the OS sandbox), the others call \
         counter's Noop:",
        SESSION + 1
    );
    for plugins in [Plugins::BuiltinBash, Plugins::Counter, Plugins::All] {
        let session = find(SESSION, plugins);
        println!(
            "  {:<17} wall median {:>6.1} ms (≤ {:.0} ms: {:.2}×)   CPU median {:>6.1} ms (≤ {:.0} ms: {:.2}×)   peak RSS median {:>10} (≤ {SESSION_RSS_BUDGET_MIB:.0} MiB: {:.2}×)",
            plugins.label(),
            ms(session.wall),
            ms(SESSION_WALL_BUDGET),
            session.wall.as_secs_f64() / SESSION_WALL_BUDGET.as_secs_f64(),
            ms(session.cpu),
            ms(SESSION_CPU_BUDGET),
            session.cpu.as_secs_f64() / SESSION_CPU_BUDGET.as_secs_f64(),
            rss(session.max_rss_kib),
            mib(session.max_rss_kib) / SESSION_RSS_BUDGET_MIB
        );
    }
    let bash = per_cycle_ms(
        find(SESSION, Plugins::BuiltinBash).wall,
        find(0, Plugins::BuiltinBash).wall,
        SESSION,
    );
    println!(
        "  a cycle with Bash `true` (model turn + sandboxed bash round trip): {bash:.2} ms; start-up with the built-ins alone: {:.1} ms",
        ms(find(0, Plugins::BuiltinBash).wall)
    );
    println!();
    println!(
        "[1] CPU time of this bench process during the run (getrusage RUSAGE_SELF delta): the \
         scripted model server on its one tokio worker (it parses and records every request), \
         plus spawning the child. Kaizen's CPU and peak RSS come from wait4 on the child."
    );
    println!(
        "[2] ru_maxrss from wait4. A child's ru_maxrss includes its parent's RSS at exec, so this \
         process's peak was reset to its current RSS (/proc/self/clear_refs) before each spawn; \
         that RSS was at most {:.1} MiB, so larger figures are kaizen's own (\"≤\" marks any that \
         is not).",
        mib(floor_kib)
    );
}
