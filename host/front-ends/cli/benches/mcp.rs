//! MCP `tools/call` round trips, each timed from sending the request to
//! having the whole response, medians over many calls one after another:
//!
//! - **server, stdio**: `kaizen mcp serve` on its pipes, the test plugin
//!   `hello`'s `Greet`. The client side is a write and a read of one line,
//!   so the figure is the server's: parsing, the guard (rules, mode,
//!   hooks), a fresh component instance, the call and the reply. Budget
//!   ≤ 0.5 ms.
//! - **server, HTTP**: the same over `kaizen mcp serve --http` (streamable
//!   HTTP, one kept-alive connection, reqwest as the client).
//! - **client**: kaizen calling `echo` of a trivial stdio server (a
//!   standard-library Python script) in its OS sandbox, through the
//!   registry and rmcp's client (`kaizen tools call --repeat`).
//!
//! `cargo bench -p kaizen --bench mcp`

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CALLS: usize = 2000;
const WARM_UP: usize = 200;
const BUDGET_MS: f64 = 0.5;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn greet(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"Greet","arguments":{{"name":"bench"}}}}}}"#
    )
}

/// `kaizen ARGS` with a home of its own and the shared compile cache.
fn kaizen(home: &Path, args: &[&str]) -> Command {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kaizen"));
    cmd.args(args)
        .env("KAIZEN_HOME", home)
        .env("KAIZEN_CACHE_DIR", &cache)
        .env("CLAUDE_CONFIG_DIR", home.join("no-claude-settings"));
    cmd
}

/// `kaizen mcp serve` with the `hello` plugin, and `extra` arguments.
fn serve(home: &Path, workspace: &Path, extra: &[&str], stdout: Stdio) -> Child {
    let hello = kaizen_test_artifacts::plugin_dir("hello");
    let mut args = vec!["mcp", "serve", "--plugins", hello.to_str().unwrap()];
    args.extend(["--cwd", workspace.to_str().unwrap()]);
    args.extend(extra);
    kaizen(home, &args)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("kaizen mcp serve")
}

fn stdio_round_trips(home: &Path, workspace: &Path) -> Vec<Duration> {
    let mut server = serve(home, workspace, &[], Stdio::piped());
    let mut to_server = server.stdin.take().expect("stdin");
    let mut from_server = BufReader::new(server.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut exchange = |text: &str, answer: bool| {
        to_server.write_all(text.as_bytes()).expect("write");
        to_server.write_all(b"\n").expect("write");
        to_server.flush().expect("flush");
        line.clear();
        if answer {
            from_server.read_line(&mut line).expect("read");
            assert!(!line.is_empty(), "the server closed its output");
        }
        line.clone()
    };
    exchange(INITIALIZE, true);
    exchange(INITIALIZED, false);
    let samples = timed(|id| {
        let line = exchange(&greet(id), true);
        assert!(line.contains("Hello, bench!"), "{line}");
    });
    let _ = server.kill();
    let _ = server.wait();
    samples
}

fn http_round_trips(home: &Path, workspace: &Path) -> Vec<Duration> {
    let mut server = serve(home, workspace, &["--http", "127.0.0.1:0"], Stdio::null());
    // "kaizen: serving MCP at http://ADDR/mcp" on stderr.
    let mut stderr = BufReader::new(server.stderr.take().expect("stderr"));
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("read") > 0,
            "the server ended"
        );
        if let Some(url) = line.trim().strip_prefix("kaizen: serving MCP at ") {
            break url.to_string();
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = kaizen_llm::http_client()
        .expect("TLS")
        .build()
        .expect("an HTTP client");
    let post = |body: String, session: Option<&str>| {
        let mut request = client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body);
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-06-18");
        }
        async move {
            let response = request.send().await.expect("POST");
            assert!(response.status().is_success(), "{}", response.status());
            let session = response
                .headers()
                .get("mcp-session-id")
                .map(|v| v.to_str().unwrap().to_string());
            (session, response.text().await.expect("body"))
        }
    };
    let (session, _) = runtime.block_on(post(INITIALIZE.into(), None));
    let session = session.expect("a session id");
    runtime.block_on(post(INITIALIZED.into(), Some(&session)));
    let samples = timed(|id| {
        let (_, body) = runtime.block_on(post(greet(id), Some(&session)));
        assert!(body.contains("Hello, bench!"), "{body}");
    });
    let _ = server.kill();
    let _ = server.wait();
    samples
}

/// The median `kaizen tools call --repeat` reports for a trivial stdio
/// server's `echo`.
fn client_median(home: &Path, workspace: &Path) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp/misbehaving_server.py"
    );
    let config = format!(
        "[mcp_servers.trivial]\ncommand = \"python3\"\nargs = [{script:?}]\nread = [{:?}]\n",
        Path::new(script).parent().unwrap()
    );
    std::fs::write(home.join("config.toml"), config).expect("config");
    let calls = (WARM_UP + CALLS).to_string();
    let out = kaizen(
        home,
        &[
            "tools",
            "call",
            "mcp__trivial__echo",
            r#"{"text":"bench"}"#,
            "--repeat",
            &calls,
            "--cwd",
            workspace.to_str().unwrap(),
        ],
    )
    .output()
    .expect("kaizen tools call");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    stderr
        .lines()
        .find(|line| line.starts_with("mcp__trivial__echo:"))
        .unwrap_or_else(|| panic!("no latency line: {stderr}"))
        .to_string()
}

/// Runs `call` WARM_UP + CALLS times (with ids from 1) and times the
/// calls after the warm-up.
fn timed(mut call: impl FnMut(usize)) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(CALLS);
    for id in 1..=(WARM_UP + CALLS) {
        let started = Instant::now();
        call(id);
        if id > WARM_UP {
            samples.push(started.elapsed());
        }
    }
    samples.sort();
    samples
}

/// Median, p90 and min of sorted samples, in ms.
fn summary(what: &str, samples: &[Duration]) -> f64 {
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{what}: median {:.3} ms, p90 {:.3} ms, min {:.3} ms",
        ms(at(0.5)),
        ms(at(0.9)),
        ms(samples[0])
    );
    ms(at(0.5))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let workspace = tempfile::tempdir().expect("workspace");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "MCP tools/call round trips, {CALLS} calls after {WARM_UP} warm-up; load {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let median = summary(
        "kaizen mcp serve, stdio (hello's Greet)",
        &stdio_round_trips(home.path(), workspace.path()),
    );
    let verdict = if median <= BUDGET_MS {
        "within budget"
    } else {
        "OVER BUDGET"
    };
    println!(
        "  median {median:.3} ms (≤ {BUDGET_MS} ms: {:.2}×, {verdict})",
        median / BUDGET_MS
    );
    summary(
        "kaizen mcp serve --http (hello's Greet)",
        &http_round_trips(home.path(), workspace.path()),
    );
    println!(
        "kaizen as a client, stdio server in the OS sandbox: {}",
        client_median(home.path(), workspace.path())
    );
}
