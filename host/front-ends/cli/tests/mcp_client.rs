//! Kaizen as an MCP client: the reference servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`,
//! installed under the target directory) and a server that misbehaves on
//! purpose, each started in its own OS sandbox, their tools called by a
//! `kaizen run` on the scripted model server.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{Run, call_fields, completed, result_of, scripted_run, tool_results};
use kaizen_model_server::{Recorded, Reply};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The reference servers, pinned.
const SERVERS: [&str; 2] = [
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];

/// Where the reference servers are installed (once per target directory).
fn npm_prefix() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm");
    kaizen_test_support::npm::install(&root, "mcp-servers", &SERVERS)
        .canonicalize()
        .unwrap()
}

fn server_script(package: &str) -> String {
    npm_prefix()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .display()
        .to_string()
}

const MISBEHAVING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp/misbehaving_server.py"
);

/// A workspace, and a home whose config names the reference servers
/// (`everything`, `fs`, serving the workspace) and the misbehaving one
/// (`bad`, with a one-second call timeout).
fn with_servers() -> Run {
    let run = Run::builtins_only();
    let npm = npm_prefix();
    let config = format!(
        r#"
[mcp_servers.everything]
command = "node"
args = [{everything:?}, "stdio"]
read = [{npm:?}]

[mcp_servers.fs]
command = "node"
args = [{fs:?}, {workspace:?}]
read = [{npm:?}]

[mcp_servers.bad]
command = "python3"
args = [{bad:?}]
read = [{tests:?}]
tool_timeout_sec = 1
"#,
        everything = server_script("server-everything"),
        fs = server_script("server-filesystem"),
        bad = MISBEHAVING,
        tests = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp"),
        npm = npm.display().to_string(),
        workspace = run.ws().display().to_string(),
    );
    run.set_config(config);
    run
}

fn call(name: &str, arguments: Value) -> Reply {
    Reply::tool(name, &arguments.to_string())
}

/// The tool results the model was sent in the last request.
fn last_results(requests: &[Recorded]) -> Vec<String> {
    tool_results(&requests.last().expect("a request").body)
}

#[tokio::test]
async fn a_run_uses_the_reference_servers_tools_in_the_sandbox() {
    let run = with_servers();
    let root = run.ws();
    std::fs::write(root.join("notes.txt"), "the answer is 42\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().canonicalize().unwrap().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-MCP-CLIENT").unwrap();
    let replies = vec![
        call("mcp__everything__echo", json!({"message": "ping-7"})),
        call(
            "mcp__fs__read_text_file",
            json!({"path": root.join("notes.txt")}),
        ),
        call(
            "mcp__bad__read_path",
            json!({"path": root.join("notes.txt")}),
        ),
        call("mcp__bad__read_path", json!({"path": secret})),
        call("mcp__everything__echo", json!({"wrong": 1})),
        Reply::text("The notes say 42. DONE"),
    ];
    let (out, requests) = run.scripted_run(replies, &[]).await;
    completed(&out);
    // The model was offered the servers' tools under their MCP names.
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "mcp__everything__echo",
        "mcp__fs__read_text_file",
        "mcp__bad__hang",
    ] {
        assert!(offered.contains(&name), "{name} offered: {offered:?}");
    }
    let results = last_results(&requests);
    assert!(results[0].contains("ping-7"), "{}", results[0]);
    assert!(results[1].contains("the answer is 42"), "{}", results[1]);
    assert!(results[2].contains("the answer is 42"), "{}", results[2]);
    // The server's own sandbox: nothing outside its grant exists for it.
    assert!(
        !results[3].contains("TOP-SECRET") && results[3].contains("cannot read"),
        "{}",
        results[3]
    );
    // Arguments are checked against the server's schema before the call.
    assert!(results[4].contains("schema"), "{}", results[4]);
}

#[tokio::test]
async fn hanging_crashing_and_malformed_servers_leave_the_run_standing() {
    let run = with_servers();
    let root = run.ws();
    let echo = |text: &str| call("mcp__bad__echo", json!({"text": text}));
    let replies = vec![
        call("mcp__bad__hang", json!({})),
        echo("after the hang"),
        call("mcp__bad__malformed", json!({})),
        call("mcp__bad__crash", json!({})),
        echo("after one crash"),
        call("mcp__bad__crash", json!({})),
        echo("after two crashes"),
        Reply::text("Survived. DONE"),
    ];
    let (out, requests) = run.scripted_run(replies, &[]).await;
    completed(&out);
    let results = last_results(&requests);
    assert!(
        results[0].contains("did not answer within 1s"),
        "{}",
        results[0]
    );
    assert_eq!(results[1], "after the hang");
    assert!(
        results[2].contains("`bad` answered malformed with a malformed result"),
        "{}",
        results[2]
    );
    assert!(
        results[3].contains("exited with code 3")
            && results[3].contains("crashing on purpose")
            && results[3].contains("restarted"),
        "{}",
        results[3]
    );
    assert_eq!(results[4], "after one crash");
    assert!(results[5].contains("after one restart"), "{}", results[5]);
    assert!(results[6].contains("not available"), "{}", results[6]);
    // Started once, restarted once.
    let starts = std::fs::read_to_string(root.join("starts.log")).unwrap();
    assert_eq!(starts.lines().count(), 2, "{starts}");
}

#[tokio::test]
async fn permission_rules_and_hooks_apply_to_mcp_tools() {
    let run = with_servers();
    let config = run.home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(0, "[hooks]\nbuiltins = [\"redact\"]\n");
    std::fs::write(&config, text).unwrap();
    let replies = vec![
        call("mcp__everything__echo", json!({"message": "denied"})),
        call("mcp__bad__echo", json!({"text": "allowed"})),
        call(
            "mcp__bad__echo",
            json!({"text": "key=AKIAIOSFODNN7EXAMPLQ"}),
        ),
        Reply::text("DONE"),
    ];
    let args = ["--disallowedTools", "mcp__everything"];
    let (out, requests) = run.scripted_run(replies, &args).await;
    let result = result_of(&out);
    let statuses = call_fields(&result, "status");
    assert_eq!(statuses, ["denied", "success", "success"], "{result}");
    let results = last_results(&requests);
    assert!(results[0].contains("mcp__everything"), "{}", results[0]);
    assert_eq!(results[1], "allowed");
    // PostToolUse hooks see an MCP tool's result like any other.
    assert!(
        results[2].contains("[REDACTED:aws-access-key-id]") && !results[2].contains("AKIA"),
        "{}",
        results[2]
    );
}

#[test]
fn mcp_list_shows_each_servers_state_grant_and_tools() {
    let run = with_servers();
    let root = run.ws();
    let mut config = std::fs::read_to_string(run.home.path().join("config.toml")).unwrap();
    config.push_str(
        "\n[mcp_servers.missing]\ncommand = \"no-such-mcp-server\"\n\n\
         [mcp_servers.secretive]\ncommand = \"node\"\nenv_vars = [\"OPENAI_API_KEY\"]\n\n\
         [mcp_servers.smuggler]\ncommand = \"node\"\nenv_vars = [\"MY_TOKEN\"]\n\n\
         [mcp_servers.insecure]\nurl = \"http://example.com/mcp\"\n",
    );
    let tests = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp");
    config.push_str(&format!(
        "\n[mcp_servers.slow]\ncommand = \"python3\"\nargs = [{MISBEHAVING:?}]\n\
         read = [{tests:?}]\nenv = {{ HANG = \"initialize\" }}\nstartup_timeout_sec = 1\n\n\
         [mcp_servers.filtered]\ncommand = \"python3\"\nargs = [{MISBEHAVING:?}]\n\
         read = [{tests:?}]\nenabled_tools = [\"echo\", \"crash\"]\ndisabled_tools = [\"crash\"]\n"
    ));
    run.set_config(config);
    // An untrusted workspace's servers do not start.
    std::fs::write(
        root.join(".mcp.json"),
        r#"{"mcpServers": {"repo": {"command": "python3", "args": ["-c", "print(1)"]}}}"#,
    )
    .unwrap();
    // A provider key under another name is refused by its value.
    let out = common::command(run.home.path(), &root, ["mcp", "list", "--json"])
        .env("ANTHROPIC_API_KEY", "provider-key-of-this-test")
        .env("MY_TOKEN", "provider-key-of-this-test")
        .output()
        .unwrap();
    let listed: Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
    let server = |name: &str| {
        listed["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed: {listed}"))
            .clone()
    };
    let everything = server("everything");
    assert_eq!(everything["state"], "running", "{everything}");
    assert_eq!(everything["grant"]["write"], json!([root]));
    assert_eq!(everything["grant"]["network"], false);
    assert_eq!(everything["contained"], true);
    assert!(
        everything["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp__everything__echo"),
        "{everything}"
    );
    let missing = server("missing");
    assert_eq!(missing["state"], "failed");
    assert!(
        missing["why"]
            .as_str()
            .unwrap()
            .contains("no-such-mcp-server"),
        "{missing}"
    );
    let slow = server("slow");
    assert_eq!(slow["state"], "failed");
    assert!(
        slow["why"]
            .as_str()
            .unwrap()
            .contains("did not finish starting within 1s"),
        "{slow}"
    );
    let filtered: Vec<Value> = server("filtered")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(filtered, [json!("mcp__filtered__echo")]);
    let problems = listed["problems"].to_string();
    assert!(
        problems.contains("OPENAI_API_KEY")
            && problems.contains("MY_TOKEN, which holds the value of ANTHROPIC_API_KEY")
            && problems.contains(".mcp.json")
            && problems.contains("`insecure`")
            && problems.contains("not https"),
        "{problems}"
    );
    assert!(!listed["servers"].to_string().contains("\"repo\""));

    // Once trusted, the workspace's own servers start, with the default
    // grant and none of the host's variables.
    std::fs::copy(MISBEHAVING, root.join("server.py")).unwrap();
    std::fs::write(
        root.join(".mcp.json"),
        r#"{"mcpServers": {
            "repo": {"command": "python3", "args": ["server.py"]},
            "leaky": {"command": "python3", "args": ["server.py"], "env": {"T": "${GITHUB_TOKEN}"}},
            "far": {"type": "http", "url": "https://example.com/mcp"}
        }}"#,
    )
    .unwrap();
    common::succeeded(&common::at_home(
        run.home.path(),
        &["trust", root.to_str().unwrap()],
    ));
    let out = common::kaizen(run.home.path(), &root, &["mcp", "list", "--json"]);
    let listed: Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
    let repo = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "repo")
        .unwrap_or_else(|| panic!("repo listed: {listed}"));
    assert_eq!(repo["state"], "running", "{repo}");
    assert_eq!(repo["origin"], ".mcp.json");
    assert_eq!(repo["grant"]["write"], json!([root]));
    let problems = listed["problems"].to_string();
    assert!(
        problems.contains("`leaky`") && problems.contains("expands"),
        "{problems}"
    );
    assert!(
        problems.contains("`far`") && problems.contains("stdio servers"),
        "{problems}"
    );

    // --mcp-config adds servers as Claude Code's flag does (its `repo`
    // wins over the workspace's); --strict-mcp-config keeps to them.
    let flagged = r#"{"mcpServers": {"repo": {"command": "python3", "args": ["server.py", "flag"]}, "flagged": {"command": "python3", "args": ["server.py"]}}}"#;
    let listed_with = |extra: &[&str]| {
        let mut args = vec!["mcp", "list", "--json", "--mcp-config", flagged];
        args.extend(extra);
        let out = common::kaizen(run.home.path(), &root, &args);
        let listed: Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
        let mut servers: Vec<(String, String, String)> = listed["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let text = |key: &str| s[key].as_str().unwrap_or_default().to_string();
                (text("name"), text("origin"), text("state"))
            })
            .collect();
        servers.sort();
        servers
    };
    let flag = |name: &str| {
        (
            name.to_string(),
            "--mcp-config".to_string(),
            "running".to_string(),
        )
    };
    let all = listed_with(&[]);
    assert!(
        all.contains(&flag("repo")) && all.contains(&flag("flagged")),
        "{all:?}"
    );
    assert!(all.iter().any(|(name, ..)| name == "everything"), "{all:?}");
    assert_eq!(
        listed_with(&["--strict-mcp-config"]),
        [flag("flagged"), flag("repo")]
    );
}

/// A port no one listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn a_run_uses_remote_servers_over_streamable_http_with_the_hosts_token() {
    // The reference server over streamable HTTP.
    let port = free_port();
    let (_everything, _) = common::spawn_until(
        std::process::Command::new("node")
            .arg(server_script("server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string()),
        "listening on port",
    );
    // Kaizen's own server, which requires a bearer token.
    let served_home = tempfile::tempdir().unwrap();
    let served_ws = tempfile::tempdir().unwrap();
    std::fs::write(served_ws.path().join("remote.txt"), "far away").unwrap();
    std::fs::write(
        served_home.path().join("config.toml"),
        "[mcp]\nserve-token-env = \"KZ_SERVE_TOKEN\"\n",
    )
    .unwrap();
    const TOKEN: &str = "tok-remote-4711";
    let (_served, kaizen_url) = common::serve_mcp_http(
        common::command(
            served_home.path(),
            served_ws.path(),
            ["mcp", "serve", "--http", "127.0.0.1:0"],
        )
        .env("KZ_SERVE_TOKEN", TOKEN),
    );

    let run = Run::builtins_only();
    let config = format!(
        "[mcp_servers.far]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n\
         [mcp_servers.kz]\nurl = {kaizen_url:?}\nbearer_token_env_var = \"KZ_CLIENT_TOKEN\"\n\
         enabled_tools = [\"Glob\"]\n"
    );
    run.set_config(config);
    let replies = vec![
        call("mcp__far__echo", json!({"message": "over http"})),
        call("mcp__kz__Glob", json!({"pattern": "*.txt"})),
        Reply::text("DONE"),
    ];
    // Remote tools reach beyond the grant: the default mode would ask.
    let args = ["--permission-mode", "bypassPermissions"];
    // The client's token comes from the host's environment.
    let env = [("KZ_CLIENT_TOKEN", Path::new(TOKEN))];
    let (out, requests) = scripted_run(run.home.path(), &run.ws(), replies, &args, &env).await;
    completed(&out);
    let results = last_results(&requests);
    assert!(results[0].contains("over http"), "{}", results[0]);
    assert!(results[1].contains("remote.txt"), "{}", results[1]);
    // The token stayed in the host: not in the output, not sent to the
    // model.
    let bodies: Vec<String> = requests.iter().map(|r| r.body.to_string()).collect();
    assert!(!format!("{out:?}{bodies:?}").contains(TOKEN));
}
