//! `Grep` inside wasm against native ripgrep on the same large tree:
//! `cargo bench -p kaizen --bench grep_vs_rg`.
//!
//! The tree is the sources of every crate in the local cargo registry
//! (`$CARGO_HOME/registry/src`, a few hundred MB), or `GREP_BENCH_TREE`.
//! Each case runs `kaizen tools call Grep …` and the equivalent `rg`
//! (`--hidden`, version-control directories excluded, no config file: the
//! tool's defaults), once to warm up and then five times each, taking turns
//! so that load from elsewhere falls on all alike, and compares medians. The
//! tool's time is net of a trivial `kaizen tools call Grep` on an empty
//! directory (process start, loading the plugins, instantiating the
//! component). `rg` uses every core, the component one thread, so `rg -j1`
//! is reported too for a like-for-like ratio. Both must find the same
//! files (and, counting, the same lines); the numbers are printed side by
//! side.
//!
//! `rg` is not installed by the bench: without it on `PATH` only the
//! tool's times are printed (`apt-get install ripgrep` or `cargo install
//! ripgrep`). Run without `--bench` (as `cargo test --benches` does), it
//! only says how to run it.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Timed runs per command, after one warm-up.
const RUNS: usize = 5;

/// Directories the tool never searches; `rg` gets the same exclusion.
const VCS_GLOB: &str = "!{.git,.svn,.hg,.bzr,.jj,.sl}";

/// The budget (docs/budgets.md) and goal for tool time / `rg` time.
const BUDGET: f64 = 2.0;
const GOAL: f64 = 1.5;

/// One comparison.
struct Case {
    /// What it shows.
    name: &'static str,
    /// The regex.
    pattern: &'static str,
    /// `files_with_matches` or `count`.
    mode: &'static str,
}

const CASES: [Case; 4] = [
    Case {
        name: "literal, files",
        pattern: "fn main",
        mode: "files_with_matches",
    },
    Case {
        name: "literal, count",
        pattern: "fn main",
        mode: "count",
    },
    Case {
        name: "regex, files",
        pattern: r"impl\s+\w+\s+for",
        mode: "files_with_matches",
    },
    Case {
        name: "regex, count",
        pattern: r"impl\s+\w+\s+for",
        mode: "count",
    },
];

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("grep_vs_rg: run it with `cargo bench -p kaizen --bench grep_vs_rg`");
        return;
    }
    let Some(tree) = tree() else {
        println!(
            "grep_vs_rg: no tree to search: set GREP_BENCH_TREE or fill the cargo registry \
             ($CARGO_HOME/registry/src)"
        );
        return;
    };
    let rg = rg_version();
    let home = tempfile::tempdir().expect("temporary KAIZEN_HOME");
    let empty = tempfile::tempdir().expect("temporary empty workspace");
    let kaizen = Kaizen {
        home: home.path().to_path_buf(),
        cache: Path::new(env!("CARGO_TARGET_TMPDIR")).join("grep-bench-cache"),
    };

    println!("Grep (wasm component) vs ripgrep on {}", tree.display());
    println!(
        "  {} files; medians of {RUNS} runs after one warm-up",
        count_files(&tree)
    );
    match &rg {
        Some(version) => println!("  rg: {version}"),
        None => println!(
            "  rg is not on PATH: install ripgrep (`apt-get install ripgrep`) to compare; \
             showing the tool's times only"
        ),
    }

    println!();
    println!(
        "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7}   files (tool / rg)",
        "case", "tool", "startup", "tool-net", "rg", "rg -j1", "ratio", "ratio1"
    );
    // A trivial call: the process, the plugins, one instance, no work.
    let trivial = serde_json::json!({"pattern": "x"});
    let mut worst = 0f64;
    for case in &CASES {
        let input = serde_json::json!({"pattern": case.pattern, "output_mode": case.mode});
        // Warm-ups, which also give the results to compare.
        kaizen.grep(empty.path(), &trivial);
        let (_, metadata) = kaizen.grep(&tree, &input);
        let rg_out = rg.as_ref().map(|_| {
            rg_run(&tree, case, true);
            rg_run(&tree, case, false).1
        });
        // The commands take turns, so that a load from elsewhere falls on
        // all of them alike.
        let mut times: [Vec<Duration>; 4] = Default::default();
        for _ in 0..RUNS {
            times[0].push(kaizen.grep(empty.path(), &trivial).0);
            times[1].push(kaizen.grep(&tree, &input).0);
            if rg.is_some() {
                times[2].push(rg_run(&tree, case, false).0);
                times[3].push(rg_run(&tree, case, true).0);
            }
        }
        let [startup, tool, all, one] = times.map(median);
        let net = tool.saturating_sub(startup);
        let tool_files = metadata["numFiles"].as_u64().unwrap_or(0);
        let Some(rg_out) = rg_out else {
            println!(
                "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7}   {tool_files} / -",
                case.name,
                ms(tool),
                ms(startup),
                ms(net),
                "-",
                "-",
                "-",
                "-"
            );
            continue;
        };
        let rg_files = String::from_utf8_lossy(&rg_out.stdout).lines().count() as u64;
        let ratio = net.as_secs_f64() / all.as_secs_f64();
        let ratio1 = net.as_secs_f64() / one.as_secs_f64();
        worst = worst.max(ratio);
        let mut files = format!("{tool_files} / {rg_files}");
        if tool_files != rg_files {
            files.push_str("  MISMATCH");
        }
        if case.mode == "count" {
            let tool_matches = metadata["numMatches"].as_u64().unwrap_or(0);
            let rg_matches = rg_matches(&rg_out);
            files.push_str(&format!("; matching lines {tool_matches} / {rg_matches}"));
            if tool_matches != rg_matches {
                files.push_str("  MISMATCH");
            }
        }
        println!(
            "{:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6.2}x {:>6.2}x   {files}",
            case.name,
            ms(tool),
            ms(startup),
            ms(net),
            ms(all),
            ms(one),
            ratio,
            ratio1
        );
    }
    if rg.is_some() {
        println!();
        println!(
            "tool-net = tool - startup (a trivial `kaizen tools call Grep` on an empty \
             directory); ratio = tool-net / rg (all cores), ratio1 = tool-net / rg -j1."
        );
        println!(
            "Worst ratio {worst:.2}x: {} (budget <= {BUDGET}x, goal <= {GOAL}x)",
            if worst <= GOAL {
                "within the goal"
            } else if worst <= BUDGET {
                "within the budget"
            } else {
                "OVER the budget"
            }
        );
    }
}

/// The tree to search: `GREP_BENCH_TREE`, else the registry sources.
fn tree() -> Option<PathBuf> {
    if let Some(tree) = std::env::var_os("GREP_BENCH_TREE") {
        return Some(PathBuf::from(tree));
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))?;
    let tree = cargo_home.join("registry").join("src");
    tree.is_dir().then(|| tree.canonicalize().unwrap_or(tree))
}

/// `rg --version`'s first line, if `rg` runs.
fn rg_version() -> Option<String> {
    let out = Command::new("rg").arg("--version").output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned()
    })
}

/// The regular files below `tree` (not following links).
fn count_files(tree: &Path) -> usize {
    let mut count = 0;
    let mut dirs = vec![tree.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(entry.path()),
                Ok(t) if t.is_file() => count += 1,
                _ => {}
            }
        }
    }
    count
}

/// The `kaizen` binary, with a private home and a shared compile cache.
struct Kaizen {
    home: PathBuf,
    cache: PathBuf,
}

impl Kaizen {
    /// Runs `Grep` with `input` in the workspace `cwd`; the wall time and
    /// the result's metadata. Panics if the call fails.
    fn grep(&self, cwd: &Path, input: &serde_json::Value) -> (Duration, serde_json::Value) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
        cmd.args([
            "tools",
            "call",
            "Grep",
            &input.to_string(),
            "--json",
            "--cwd",
        ])
        .arg(cwd)
        .env("KAIZEN_HOME", &self.home)
        .env("KAIZEN_CACHE_DIR", &self.cache)
        // With a backtrace requested, every failed file-system call in
        // the host captures one; users do not run with it.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .env_remove("KAIZEN_LOG");
        let (time, out) = timed(&mut cmd);
        assert!(
            out.status.success(),
            "kaizen tools call Grep {input} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("kaizen --json prints JSON");
        (time, result["metadata"].clone())
    }
}

/// Runs `rg` as the tool searches for `case`, on every core or on one.
fn rg_run(tree: &Path, case: &Case, one_thread: bool) -> (Duration, Output) {
    let mut cmd = Command::new("rg");
    cmd.args(["--no-config", "--hidden", "--glob", VCS_GLOB]);
    cmd.arg(if case.mode == "count" {
        "--count"
    } else {
        "--files-with-matches"
    });
    if one_thread {
        cmd.arg("-j1");
    }
    cmd.arg("--regexp").arg(case.pattern).arg(tree);
    let (time, out) = timed(&mut cmd);
    // 1 means "no match", which is a result too.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "rg failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (time, out)
}

/// The sum of `rg --count`'s per-file counts.
fn rg_matches(out: &Output) -> u64 {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.rsplit_once(':')?.1.parse::<u64>().ok())
        .sum()
}

/// Runs `cmd` with its output captured; the wall time.
fn timed(cmd: &mut Command) -> (Duration, Output) {
    cmd.stdin(Stdio::null());
    let start = Instant::now();
    let out = cmd.output().expect("the command runs");
    (start.elapsed(), out)
}

/// The median of `times`.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// `d` in milliseconds.
fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
