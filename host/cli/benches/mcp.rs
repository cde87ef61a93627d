//! The `tools/call` round trip through `kaizen mcp serve` over stdio: a
//! client (this bench, speaking newline-delimited JSON-RPC on the pipes)
//! calls the test plugin `hello`'s `Greet` one call after another, and each
//! round trip is timed from writing the request to reading the response.
//! The client side is a write and a read of one line, so the figure is the
//! server's: parsing, the guard (rules, mode, hooks), a fresh component
//! instance, the call and the reply. Medians against the budget (≤ 0.5 ms).
//!
//! `cargo bench -p kaizen --bench mcp`

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CALLS: usize = 2000;
const WARM_UP: usize = 200;
const BUDGET_MS: f64 = 0.5;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let workspace = tempfile::tempdir().expect("workspace");
    let hello = kaizen_test_artifacts::plugin_dir("hello");
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");
    let mut server = Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .args(["mcp", "serve", "--plugins"])
        .arg(&hello)
        .arg("--cwd")
        .arg(workspace.path())
        .env("KAIZEN_HOME", home.path())
        .env("KAIZEN_CACHE_DIR", &cache)
        .env("CLAUDE_CONFIG_DIR", home.path().join("no-claude-settings"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("kaizen mcp serve");
    let mut to_server = server.stdin.take().expect("stdin");
    let mut from_server = BufReader::new(server.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut send = |text: String| {
        to_server.write_all(text.as_bytes()).expect("write");
        to_server.write_all(b"\n").expect("write");
        to_server.flush().expect("flush");
    };
    let mut receive = |line: &mut String| {
        line.clear();
        from_server.read_line(line).expect("read");
        assert!(!line.is_empty(), "the server closed its output");
    };

    send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.into());
    receive(&mut line);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());

    let mut samples = Vec::with_capacity(CALLS);
    for id in 1..=(WARM_UP + CALLS) {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"Greet","arguments":{{"name":"bench"}}}}}}"#
        );
        let started = Instant::now();
        send(request);
        receive(&mut line);
        let took = started.elapsed();
        assert!(line.contains("Hello, bench!"), "{line}");
        if id > WARM_UP {
            samples.push(took);
        }
    }
    let _ = server.kill();
    let _ = server.wait();

    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "kaizen mcp serve, stdio: tools/call of hello's Greet, {CALLS} calls after {WARM_UP} warm-up; load {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "round trip: median {:.3} ms, p90 {:.3} ms, min {:.3} ms",
        ms(at(0.5)),
        ms(at(0.9)),
        ms(samples[0])
    );
    let median = ms(at(0.5));
    let verdict = if median <= BUDGET_MS {
        "within budget"
    } else {
        "OVER BUDGET"
    };
    println!(
        "median {median:.3} ms (≤ {BUDGET_MS} ms: {:.2}×, {verdict})",
        median / BUDGET_MS
    );
}
