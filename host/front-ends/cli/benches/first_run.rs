//! The first run on a new machine or in a fresh container: every run here
//! starts with an empty `KAIZEN_HOME` (no compile cache, no sessions), as
//! in CI or a throwaway container, where every run is a first run.
//!
//! Three cases, each measured from outside the process (wall, CPU and peak
//! RSS from `wait4`), medians of several runs:
//! - `kaizen run` against a zero-latency scripted model server on loopback
//!   that answers at once: the time from spawning the process until the
//!   model server has the first request;
//! - the README's first example, `kaizen run --replay
//!   examples/list-sources.jsonl` (a Glob call and an answer), end to end;
//! - `kaizen plugins list`.
//!
//! Prints the figures against the budgets in docs/budgets.md; asserts
//! nothing about time. Run with `cargo bench -p kaizen --bench first_run`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{cpu_of, exited_ok, load_average, median, mib, ms, reset_peak_rss, spawn, wait4};
use kaizen_model_server::{ModelServer, Options, Reply, Script};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const REPS: usize = 7;
const FIRST_REQUEST_BUDGET: Duration = Duration::from_millis(500);
const REPLAY_BUDGET: Duration = Duration::from_secs(1);
const RSS_BUDGET_MIB: f64 = 80.0;

/// One measured process.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
    max_rss_kib: u64,
    /// From spawning to the model server's first request (scripted runs).
    first_request: Option<Duration>,
}

/// `kaizen ARGS` in a fresh `KAIZEN_HOME`, with nothing else from this
/// environment that could change what it does.
fn kaizen(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(args)
        .env("KAIZEN_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for var in [
        "KAIZEN_CACHE_DIR",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
        "KAIZEN_MODEL",
        "KAIZEN_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `cmd` to the end; `first_request` is polled while it runs.
fn measure(cmd: &mut Command, first_request: Option<&dyn Fn() -> bool>) -> Sample {
    reset_peak_rss();
    let start = Instant::now();
    let pid = spawn(cmd);
    let seen = first_request.and_then(|arrived| {
        while !arrived() {
            if ended(pid) {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Some(start.elapsed())
    });
    let (status, usage) = wait4(pid);
    let wall = start.elapsed();
    assert!(exited_ok(status), "kaizen failed (wait status {status})");
    Sample {
        wall,
        cpu: cpu_of(&usage),
        max_rss_kib: usage.ru_maxrss as u64,
        first_request: seen,
    }
}

/// True once process `pid` has exited (it is a zombie until reaped).
fn ended(pid: libc::pid_t) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command name, which is in parentheses.
    stat.rsplit_once(") ")
        .is_none_or(|(_, rest)| rest.starts_with('Z'))
}

/// `kaizen run` against a scripted model that answers at once.
fn scripted(rt: &tokio::runtime::Runtime, workspace: &Path) -> Sample {
    let server = rt
        .block_on(ModelServer::start_with(
            Script::new().reply(Reply::text("done")),
            Options {
                pace: None,
                ..Options::default()
            },
        ))
        .expect("model server");
    let home = tempfile::tempdir().expect("home");
    let mut cmd = kaizen(
        home.path(),
        &[
            "run",
            "--model",
            "gpt-4o",
            "--output-format",
            "json",
            "--cwd",
            path(workspace),
            "Say done.",
        ],
    );
    cmd.env("OPENAI_API_KEY", "sk-bench-key-0123456789")
        .env("OPENAI_BASE_URL", server.openai_base_url());
    let arrived = || !server.requests().is_empty();
    let sample = measure(&mut cmd, Some(&arrived));
    assert_eq!(server.remaining(), 0, "the model was asked");
    sample
}

/// The README's first example, from the repository root.
fn replay(repo: &Path) -> Sample {
    let home = tempfile::tempdir().expect("home");
    let workspace = repo.join("examples/sample-project");
    let mut cmd = kaizen(
        home.path(),
        &[
            "run",
            "--replay",
            path(&repo.join("examples/list-sources.jsonl")),
            "--cwd",
            path(&workspace),
            "List the Rust source files in this project.",
        ],
    );
    measure(&mut cmd, None)
}

/// `kaizen plugins list`.
fn plugins_list(workspace: &Path) -> Sample {
    let home = tempfile::tempdir().expect("home");
    let mut cmd = kaizen(home.path(), &["plugins", "list", "--cwd", path(workspace)]);
    measure(&mut cmd, None)
}

fn path(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let workspace = tempfile::tempdir().expect("workspace");
    let load_before = load_average();
    // Warm the page cache with the binary itself, not with any state.
    plugins_list(workspace.path());

    let mut runs: [Vec<Sample>; 3] = Default::default();
    for _ in 0..REPS {
        runs[0].push(scripted(&rt, workspace.path()));
        runs[1].push(replay(&repo));
        runs[2].push(plugins_list(workspace.path()));
    }
    let load_after = load_average();

    println!();
    println!(
        "kaizen first run: each run in a fresh KAIZEN_HOME (no compile cache), bench profile, \
         {REPS} runs each (interleaved), medians. Load average before {load_before}, after \
         {load_after}."
    );
    println!();
    println!(
        "{:<40} {:>14} {:>11} {:>13} {:>11}",
        "case", "first request", "wall", "CPU user+sys", "peak RSS"
    );
    let labels = [
        "run, scripted model (answers at once)",
        "README example (run --replay)",
        "plugins list",
    ];
    for (label, samples) in labels.iter().zip(&runs) {
        let first = samples
            .iter()
            .filter_map(|s| s.first_request)
            .collect::<Vec<_>>();
        let first = if first.is_empty() {
            "-".to_owned()
        } else {
            format!("{:.1} ms", ms(median(first.into_iter())))
        };
        println!(
            "{:<40} {:>14} {:>8.1} ms {:>10.1} ms {:>7.1} MiB",
            label,
            first,
            ms(median(samples.iter().map(|s| s.wall))),
            ms(median(samples.iter().map(|s| s.cpu))),
            mib(median(samples.iter().map(|s| s.max_rss_kib)))
        );
    }
    println!();
    let first = median(runs[0].iter().filter_map(|s| s.first_request));
    let replay_wall = median(runs[1].iter().map(|s| s.wall));
    let peak = runs
        .iter()
        .flatten()
        .map(|s| mib(s.max_rss_kib))
        .fold(0.0, f64::max);
    let verdict = |ok: bool| if ok { "within budget" } else { "OVER BUDGET" };
    println!(
        "first model request: {:.1} ms (≤ {:.0} ms: {:.2}×, {})",
        ms(first),
        ms(FIRST_REQUEST_BUDGET),
        first.as_secs_f64() / FIRST_REQUEST_BUDGET.as_secs_f64(),
        verdict(first <= FIRST_REQUEST_BUDGET)
    );
    println!(
        "README example end to end: {:.1} ms (≤ {:.0} ms: {:.2}×, {})",
        ms(replay_wall),
        ms(REPLAY_BUDGET),
        replay_wall.as_secs_f64() / REPLAY_BUDGET.as_secs_f64(),
        verdict(replay_wall <= REPLAY_BUDGET)
    );
    println!(
        "highest peak RSS of any run: {peak:.1} MiB (≤ {RSS_BUDGET_MIB:.0} MiB: {:.2}×, {})",
        peak / RSS_BUDGET_MIB,
        verdict(peak <= RSS_BUDGET_MIB)
    );
}
