//! `kaizen mcp serve` driven by the official MCP Python SDK's client (the
//! `mcp` package from PyPI, installed into a venv under the target
//! directory): tools listed with their schemas and annotations, calls run
//! as components with their grants and programs in the OS sandbox, one
//! session's notes across calls, and the same permission rules and hooks
//! as `kaizen run`.

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

    /// Runs the client against `kaizen mcp serve ARGS` here, making
    /// `calls`: what it printed.
    fn client(&self, args: &[&str], calls: Value) -> Value {
        let mut server_args = vec!["mcp", "serve"];
        server_args.extend(args);
        let root = self.root();
        server_args.extend(["--cwd", root.to_str().unwrap()]);
        let spec = json!({
            "command": env!("CARGO_BIN_EXE_kaizen"),
            "args": server_args,
            "env": {
                "KAIZEN_HOME": self.home.path(),
                "CLAUDE_CONFIG_DIR": self.home.path().join("no-claude-settings"),
                "PATH": "/usr/bin:/bin",
            },
            "calls": calls,
        });
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
