//! `kaizen mcp serve` driven by the official MCP Python SDK's client (the
//! `mcp` package from PyPI, installed into a venv under the target
//! directory): tools listed with their schemas and annotations, calls run
//! as components with their grants and programs in the OS sandbox, one
//! session's notes across calls, and the same permission rules and hooks
//! as `kaizen run`.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The official client, pinned.
const MCP_PACKAGE: &str = "mcp==2.3.0";

fn client_python() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python");
    kaizen_test_support::python::venv(&root, "mcp-client", &[MCP_PACKAGE])
}

struct Served {
    home: TempDir,
    ws: TempDir,
}

impl Served {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> PathBuf {
        self.ws.path().canonicalize().unwrap()
    }

    /// The client's spec for `kaizen mcp serve ARGS` here, on stdio.
    fn spec(&self, args: &[&str]) -> Value {
        let mut server_args = vec!["mcp", "serve"];
        server_args.extend(args);
        let root = self.root();
        server_args.extend(["--cwd", root.to_str().unwrap()]);
        json!({
            "command": env!("CARGO_BIN_EXE_kaizen"),
            "args": server_args,
            "env": {
                "KAIZEN_HOME": self.home.path(),
                "CLAUDE_CONFIG_DIR": self.home.path().join("no-claude-settings"),
                "PATH": "/usr/bin:/bin",
            },
        })
    }

    /// Runs the client against `kaizen mcp serve ARGS` here, making
    /// `calls`: what it printed.
    fn client(&self, args: &[&str], calls: Value) -> Value {
        self.client_at(self.spec(args), calls)
    }

    /// Runs the client with `spec` (a server to start, or a `url`), making
    /// `calls` (unless they are in `spec`): what it printed.
    fn client_at(&self, mut spec: Value, calls: Value) -> Value {
        if !calls.is_null() {
            spec["calls"] = calls;
        }
        let out = std::process::Command::new(client_python())
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py"))
            .arg(spec.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the MCP client failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The user's skills and commands are MCP prompts: listed with their one
/// argument, and rendered with it as a session would load them.
#[test]
fn skills_and_commands_are_prompts_to_the_official_client() {
    let served = Served::new();
    let claude = served.home.path().join("no-claude-settings");
    let skill = claude.join("skills/explain");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: explain\ndescription: Explains code plainly.\n---\nExplain $ARGUMENTS in plain words.\n",
    )
    .unwrap();
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(
        claude.join("commands/greet.md"),
        "---\ndescription: Greets someone.\nargument-hint: [name]\n---\nSay hello to $ARGUMENTS.\n",
    )
    .unwrap();
    let mut spec = served.spec(&[]);
    spec["calls"] = json!([]);
    spec["prompts"] = json!([
        {"name": "greet", "arguments": {"arguments": "Ada"}},
        {"name": "explain", "arguments": {"arguments": "src/lib.rs"}},
        {"name": "nothing-here"},
    ]);
    let out = served.client_at(spec, Value::Null);
    let listed = out["prompts"].as_array().unwrap();
    let prompt = |name: &str| {
        listed
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed: {listed:?}"))
    };
    assert_eq!(prompt("explain")["description"], "Explains code plainly.");
    assert_eq!(prompt("greet")["arguments"][0]["description"], "[name]");
    let got = out["got"].as_array().unwrap();
    assert_eq!(got[0]["messages"][0]["role"], "user");
    let greeting = got[0]["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(greeting.contains("Say hello to Ada."), "{greeting}");
    let explained = got[1]["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(
        explained.contains("Explain src/lib.rs in plain words."),
        "{explained}"
    );
    let missing = got[2]["error"].as_str().unwrap();
    assert!(missing.contains("nothing-here"), "{missing}");
}

#[test]
fn the_official_client_lists_and_calls_kaizens_tools() {
    let served = Served::new();
    let root = served.root();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "TOP-SECRET-MCP-77").unwrap();
    let out = served.client(
        &[],
        json!([
            {"name": "Glob", "arguments": {"pattern": "*.txt"}},
            {"name": "Read", "arguments": {"file_path": root.join("notes.txt")}},
            {"name": "Edit", "arguments": {"file_path": root.join("notes.txt"), "old_string": "two", "new_string": "three"}},
            {"name": "Bash", "arguments": {"command": format!("cat {}; cat notes.txt", outside.path().join("secret.txt").display())}},
            {"name": "Read", "arguments": {"file_path": outside.path().join("secret.txt")}},
            {"name": "Read", "arguments": {"file_path": 7}},
        ]),
    );
    assert_eq!(out["server"], "kaizen");
    let tools = out["tools"].as_array().unwrap();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    for name in [
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Grep",
        "Bash",
        "WebFetch",
        "TodoWrite",
    ] {
        assert_eq!(tool(name)["inputSchema"]["type"], "object", "{name}");
    }
    assert_eq!(tool("Read")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("Bash")["annotations"]["readOnlyHint"], false);
    assert_eq!(tool("Bash")["annotations"]["destructiveHint"], true);
    assert_eq!(
        tool("Bash")["annotations"]["openWorldHint"],
        false,
        "Bash has no network here"
    );
    assert_eq!(tool("WebFetch")["annotations"]["openWorldHint"], true);
    assert_eq!(tool("Read")["annotations"]["openWorldHint"], false);

    let calls = out["calls"].as_array().unwrap();
    assert_eq!(
        text(&calls[0]),
        root.join("notes.txt").display().to_string()
    );
    assert_eq!(calls[0]["structuredContent"]["numFiles"], 1);
    assert!(text(&calls[1]).contains("two"), "{}", calls[1]);
    // The Read noted the file for the session, so the Edit was allowed.
    assert_ne!(calls[2]["isError"], true, "{}", calls[2]);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "one\nthree\n"
    );
    // Programs run in the OS sandbox: the workspace is there, nothing else.
    let bash = text(&calls[3]);
    assert!(
        !bash.contains("TOP-SECRET-MCP-77") && bash.contains("three"),
        "{bash}"
    );
    assert_eq!(calls[4]["isError"], true);
    assert!(!text(&calls[4]).contains("TOP-SECRET"), "{}", calls[4]);
    // Bad arguments come back as the model would see them.
    assert_eq!(calls[5]["isError"], true);
    assert!(text(&calls[5]).contains("input schema"), "{}", calls[5]);
}

#[test]
fn rules_and_hooks_apply_as_in_a_run() {
    let served = Served::new();
    std::fs::write(
        served.home.path().join("config.toml"),
        "[hooks]\nbuiltins = [\"redact\"]\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
    let out = served.client(
        &["--disallowedTools", "WebFetch"],
        json!([
            {"name": "Bash", "arguments": {"command": "rm -rf build"}},
            {"name": "Bash", "arguments": {"command": "echo key=AKIAIOSFODNN7EXAMPLQ"}},
            {"name": "WebFetch", "arguments": {"url": "https://example.com", "prompt": "x"}},
        ]),
    );
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"WebFetch"),
        "a tool denied whole is not listed: {names:?}"
    );
    let calls = out["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], true);
    assert!(text(&calls[0]).contains("Bash(rm:*)"), "{}", calls[0]);
    let masked = text(&calls[1]);
    assert!(
        masked.contains("[REDACTED:aws-access-key-id]") && !masked.contains("AKIAIOSFODNN7EXAMPLQ"),
        "{masked}"
    );
    assert_eq!(calls[2]["isError"], true);
    assert!(text(&calls[2]).contains("WebFetch"), "{}", calls[2]);
}

/// `kaizen mcp serve --http 127.0.0.1:0` here, with `env`: the process and
/// the address it serves at.
fn serve_http(served: &Served, env: &[(&str, &str)]) -> (common::KillOnDrop, String) {
    common::serve_mcp_http(
        std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--cwd"])
            .arg(served.root())
            .env("KAIZEN_HOME", served.home.path())
            .env(
                "CLAUDE_CONFIG_DIR",
                served.home.path().join("no-claude-settings"),
            )
            .envs(env.iter().copied()),
    )
}

/// A raw `POST` of `body` to `url` with `headers`, the connection to be
/// closed after the response: the stream to read it from.
fn raw_request(url: &str, headers: &[&str], body: &str) -> std::net::TcpStream {
    use std::io::Write;
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    stream
}

/// The status line of a raw `POST` of an `initialize` to `url` with
/// `headers`.
fn raw_post(url: &str, headers: &[&str]) -> String {
    use std::io::BufRead;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let stream = raw_request(url, headers, body);
    // The status line is enough (an accepted initialize may answer with a
    // stream that stays open).
    let mut status = String::new();
    if let Err(err) = std::io::BufReader::new(stream).read_line(&mut status) {
        return format!("no response: {err}");
    }
    status
}

#[test]
fn over_http_the_official_client_works_and_foreign_origins_and_tokens_are_refused() {
    let served = Served::new();
    std::fs::write(served.root().join("a.txt"), "a").unwrap();
    let (_server, url) = serve_http(&served, &[]);
    let out = served.client_at(
        json!({"url": url}),
        json!([{"name": "Glob", "arguments": {"pattern": "*.txt"}}]),
    );
    assert_eq!(out["server"], "kaizen");
    assert_eq!(
        text(&out["calls"][0]),
        served.root().join("a.txt").display().to_string()
    );
    // The stateless protocol (2026-07-28): one request, no session.
    let stateless = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Glob","arguments":{"pattern":"*.txt"},"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = [
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: Glob",
    ];
    let mut response = String::new();
    std::io::Read::read_to_string(&mut raw_request(&url, &headers, stateless), &mut response)
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains(r#""id":7"#) && response.contains("a.txt"),
        "{response}"
    );
    // DNS rebinding: a page elsewhere cannot drive the local server.
    let foreign = raw_post(&url, &["Origin: http://evil.example"]);
    assert!(foreign.contains("403"), "{foreign}");
    let local = raw_post(&url, &["Origin: http://localhost:3000"]);
    assert!(local.contains("200"), "{local}");

    // With a token in the user's config, requests must carry it.
    let served = Served::new();
    std::fs::write(
        served.home.path().join("config.toml"),
        "[mcp]\nserve-token-env = \"KZ_TEST_MCP_TOKEN\"\n",
    )
    .unwrap();
    let (_server, url) = serve_http(&served, &[("KZ_TEST_MCP_TOKEN", "tok-123")]);
    assert!(raw_post(&url, &[]).contains("401"));
    assert!(raw_post(&url, &["Authorization: Bearer wrong"]).contains("401"));
    let out = served.client_at(
        json!({"url": url, "headers": {"Authorization": "Bearer tok-123"}}),
        json!([{"name": "Glob", "arguments": {"pattern": "*"}}]),
    );
    assert_eq!(out["server"], "kaizen");
}

#[test]
fn asks_become_elicitations_and_long_calls_report_progress() {
    // Bash with the network reaches beyond the grant: the default mode asks.
    let network_bash = "[grants.bash]\nprocess = { programs = [\"bash\"], network = true }\n";
    let served = Served::new();
    std::fs::write(served.home.path().join("config.toml"), network_bash).unwrap();
    let bash = |command: &str| json!({"name": "Bash", "arguments": {"command": command}});
    let mut spec_calls = json!([bash("echo approved"), bash("sleep 2.5; echo slept")]);
    spec_calls[1]["progress"] = json!(true);
    let mut spec = served.spec(&[]);
    spec["elicit"] = json!("allow");
    let out = served.client_at(spec, spec_calls);
    let asked = out["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{out}");
    assert!(
        asked[0]
            .as_str()
            .unwrap()
            .contains("permission to run Bash")
            && asked[0].as_str().unwrap().contains("echo approved"),
        "{}",
        asked[0]
    );
    assert_eq!(text(&out["calls"][0]).trim(), "approved");
    assert_eq!(text(&out["calls"][1]).trim(), "slept");
    let progress = out["calls"][1]["progress"].as_array().unwrap();
    assert!(
        progress
            .iter()
            .any(|m| m.as_str().unwrap().starts_with("still running after")),
        "{progress:?}"
    );

    let mut spec = served.spec(&[]);
    spec["elicit"] = json!("deny");
    let out = served.client_at(spec, json!([bash("echo refused")]));
    assert_eq!(out["calls"][0]["isError"], true, "{out}");
    let refused = text(&out["calls"][0]);
    assert!(
        !refused.contains("refused\n") && refused.contains("not now"),
        "{refused}"
    );
}
