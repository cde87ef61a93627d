//! A 300-cycle session through the real product, with and without
//! compaction: the `kaizen` binary against a zero-latency scripted model
//! server in this process, each cycle a call of the test plugin `hello`'s
//! `Greet` with a 2 KB name, so that the conversation grows by about a
//! thousand tokens a cycle. With compaction the model's window is set to
//! 20 000 tokens (compacting past 16 000: about every ten cycles, each
//! summary answered at once by the server); without it the conversation
//! grows to about 300 000 tokens.
//!
//! Each cycle's time is taken where the bench reads the `assistant` events
//! of `events` from the pipe: the host's work per cycle (the request
//! built and sent, the response parsed, the tool called, the journal
//! written). Prints the median of cycles 2-10 and 290-300, the
//! compactions, and kaizen's peak RSS; asserts nothing about time.
//!
//! Run with `cargo bench -p kaizen --bench long_session`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::{median, mib, ms, reset_peak_rss, spawn, wait4};
use kaizen_model_server::{ModelServer, Options, Reply, Script};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "sk-bench-key-0123456789";
const CYCLES: usize = 300;
const NAME_BYTES: usize = 2_000;

/// A deterministic name of varied words, so that it tokenizes like text.
fn name(seed: usize) -> String {
    const WORDS: &[&str] = &[
        "alpha",
        "compile",
        "river",
        "budget",
        "sandbox",
        "token",
        "window",
        "plugin",
        "north",
        "cycle",
        "harbor",
        "seventeen",
        "quartz",
        "ledger",
        "summary",
        "kernel",
    ];
    let mut out = String::new();
    let mut i = seed;
    while out.len() < NAME_BYTES {
        i = i.wrapping_mul(2_654_435_761).wrapping_add(12_345) % 1_000_003;
        out.push_str(WORDS[i % WORDS.len()]);
        out.push(' ');
    }
    out
}

fn script() -> Script {
    let mut script = (0..CYCLES).fold(Script::new(), |script, i| {
        let input = json!({"name": name(i)}).to_string();
        script.reply(Reply::tool("Greet", &input).with_usage(0, 0))
    });
    script = script.reply(Reply::text("done"));
    script.aside = Some(Reply::text(
        "SUMMARY: greeted many long names with Greet; nothing else to keep.",
    ));
    script
}

/// One run: each cycle's duration, the compactions, kaizen's peak RSS.
struct Ran {
    cycles: Vec<Duration>,
    compactions: u64,
    max_rss_kib: u64,
    wall: Duration,
}

fn run_once(rt: &tokio::runtime::Runtime, compact: bool) -> Ran {
    let server = rt
        .block_on(ModelServer::start_with(
            script(),
            Options {
                pace: None,
                ..Options::default()
            },
        ))
        .expect("model server");
    let home = tempfile::tempdir().expect("home");
    let workspace = tempfile::tempdir().expect("workspace");
    let config = if compact {
        "[context]\n[context.windows]\n\"gpt-4o\" = 20000\n"
    } else {
        "[context]\ncompact = false\n"
    };
    std::fs::write(home.path().join("config.toml"), config).expect("config");
    let (reader, writer) = std::io::pipe().expect("pipe");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.arg("run")
        .args(["--model", "gpt-4o", "--output-format", "events"])
        .args([
            "--max-cycles",
            &(CYCLES + 1).to_string(),
            "--timeout",
            "600",
        ])
        .arg("--cwd")
        .arg(workspace.path())
        .arg("--plugins")
        .arg(kaizen_test_artifacts::plugin_dir("hello"))
        .arg("Greet everyone.")
        .env("KAIZEN_HOME", home.path())
        .env("KAIZEN_CACHE_DIR", common_cache())
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", server.openai_base_url())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("KAIZEN_LOG")
        .stdin(Stdio::null())
        .stdout(unsafe { Stdio::from_raw_fd(writer.into_raw_fd()) })
        .stderr(Stdio::null());
    reset_peak_rss();
    let start = Instant::now();
    let pid = spawn(&mut cmd);
    drop(cmd);
    let mut stamps = Vec::new();
    let mut compactions = 0;
    let mut result = Value::Null;
    for line in BufReader::new(reader).lines() {
        let line = line.expect("stdout");
        let event: Value = serde_json::from_str(&line).expect("a JSON line");
        match event["type"].as_str() {
            Some("assistant") => stamps.push(Instant::now()),
            Some("compaction") => compactions += 1,
            Some("result") => result = event,
            _ => {}
        }
    }
    let (_, usage) = wait4(pid);
    let wall = start.elapsed();
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["cycles_used"], CYCLES as u64 + 1);
    let cycles = stamps.windows(2).map(|pair| pair[1] - pair[0]).collect();
    Ran {
        cycles,
        compactions,
        max_rss_kib: usage.ru_maxrss as u64,
        wall,
    }
}

fn common_cache() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    println!(
        "long_session: {CYCLES} cycles, each adding ~{NAME_BYTES} bytes twice (call and result)"
    );
    for compact in [true, false] {
        let ran = run_once(&rt, compact);
        // cycles[k] is the time from cycle k+1's answer to cycle k+2's.
        let early = median(ran.cycles[0..9].iter().copied());
        let late = median(ran.cycles[ran.cycles.len() - 10..].iter().copied());
        println!(
            "  {:<18} cycles 2-10: {:>7.2} ms   cycles 291-300: {:>7.2} ms   ratio {:>5.2}   compactions {:>3}   peak RSS {:>6.1} MiB   total {:>7.0} ms",
            if compact {
                "with compaction"
            } else {
                "without"
            },
            ms(early),
            ms(late),
            ms(late) / ms(early),
            ran.compactions,
            mib(ran.max_rss_kib),
            ms(ran.wall),
        );
    }
}
