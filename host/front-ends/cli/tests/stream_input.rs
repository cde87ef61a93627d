//! `--input-format stream-json` through the real `kaizen run` on the
//! scripted model server, driven the way an embedding program drives it:
//! the task as the first JSON line, two steering messages sent while a
//! tool runs (both taken at the next model call, never mid-tool), a second
//! run started by a message sent between runs, and an interrupt control
//! line ending a third. And driven by the real program of that kind:
//! Claude's Agent SDK for Python, with `kaizen` as its CLI.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::Run;
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};
use std::process::{Output, Stdio};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

fn user(text: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": text}}).to_string() + "\n"
}

/// A `kaizen run --input-format stream-json --output-format events
/// EXTRA` against a server answering `script`, with `config` as the
/// user's config, its stdin and stdout piped.
struct Driven {
    server: ModelServer,
    /// Kept until the test ends.
    run: Run,
    child: tokio::process::Child,
    /// Until [`Driven::finish`] closes it.
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Driven {
    /// Writes `line` to the process's stdin.
    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Reads events until one of `kind`; all of them, that one last.
    /// Fails after a minute without it, rather than waiting on an open
    /// pipe.
    async fn until(&mut self, kind: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        let minute = std::time::Duration::from_secs(60);
        while let Some(line) = tokio::time::timeout(minute, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no `{kind}` event within a minute"))
            .unwrap()
        {
            let event: Value = serde_json::from_str(&line).unwrap();
            let found = event["type"] == kind;
            seen.push(event);
            if found {
                return seen;
            }
        }
        panic!("stdout ended before a `{kind}` event: {seen:?}");
    }

    /// Closes stdin and waits for the process to end: its status and
    /// stderr (its stdout is read by [`Driven::until`]).
    async fn finish(&mut self) -> Output {
        drop(self.stdin.take());
        let mut stderr = Vec::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_end(&mut stderr).await.unwrap();
        }
        let status = self.child.wait().await.unwrap();
        Output {
            status,
            stdout: Vec::new(),
            stderr,
        }
    }
}

async fn drive(script: Script, config: &str, extra: &[&str]) -> Driven {
    let server = ModelServer::start(script).await.unwrap();
    let run = Run::builtins_only();
    run.set_config(config);
    let mut args = vec![
        "--model",
        "gpt-4o-mini",
        "--input-format",
        "stream-json",
        "--output-format",
        "events",
    ];
    args.extend(extra);
    let cmd = run.command(Some((&server, Wire::OpenAi)), &args);
    let mut child = tokio::process::Command::from(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = Some(child.stdin.take().unwrap());
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Driven {
        server,
        run,
        child,
        stdin,
        lines,
    }
}

const BYPASS: &[&str] = &["--permission-mode", "bypassPermissions"];

#[tokio::test(flavor = "multi_thread")]
async fn a_program_drives_and_steers_a_session_over_stdin() {
    let sleep = |seconds: u32| json!({"command": format!("sleep {seconds}")}).to_string();
    let script = common::run::replies(vec![
        Reply::tool("Bash", &sleep(1)),
        Reply::text("Noted both."),
        Reply::text("Second run answered."),
        Reply::tool("Bash", &sleep(2)),
    ]);
    let mut driven = drive(script, "", BYPASS).await;

    // The task; while its tool runs, two messages.
    driven.send(&user("Start.")).await;
    driven.until("tool_call").await;
    driven.send(&user("Steer one.")).await;
    driven.send(
        &(json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Steer two."}]}}).to_string() + "\n"),
    )
    .await;
    let first = driven.until("result").await;
    let result = first.last().unwrap();
    assert_eq!(result["status"], "complete", "{first:?}");
    assert_eq!(result["output"], "Noted both.");
    let taken: Vec<(&Value, &Value)> = first
        .iter()
        .filter(|e| e["type"] == "user_message")
        .map(|e| (&e["cycle"], &e["text"]))
        .collect();
    assert_eq!(
        taken,
        [
            (&json!(2), &json!("Steer one.")),
            (&json!(2), &json!("Steer two."))
        ]
    );

    // Between runs, a message starts the next run of the same session.
    driven.send(&user("Again.")).await;
    let second = driven.until("result").await;
    let result = second.last().unwrap();
    assert_eq!(result["output"], "Second run answered.");
    let session = result["session_id"].clone();

    // An interrupt control line while a tool runs ends the third run.
    driven.send(&user("Sleep now.")).await;
    driven.until("tool_call").await;
    let interrupt =
        json!({"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}});
    driven.send(&(interrupt.to_string() + "\n")).await;
    let third = driven.until("result").await;
    let result = third.last().unwrap();
    assert_eq!(result["status"], "interrupted", "{third:?}");
    assert_eq!(result["session_id"], session);

    // Stdin closed: the process ends.
    let out = driven.finish().await;
    assert!(out.status.code().is_some(), "{out:?}");

    // What the model saw: the steering after the tool's result, in the
    // second call; the next run's message last in the third.
    let requests = driven.server.requests();
    assert_eq!(requests.len(), 4);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tail: Vec<&Value> = messages[messages.len() - 3..].iter().collect();
    assert_eq!(tail[0]["role"], "tool");
    assert_eq!(tail[1]["content"], "Steer one.");
    assert_eq!(tail[2]["content"], "Steer two.");
    let messages = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], "Again.");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_lines_are_skipped_and_a_task_argument_is_refused() {
    let script = common::run::replies(vec![Reply::text("Fine.")]);
    let server = ModelServer::start(script).await.unwrap();
    let run = Run::builtins_only();
    let args = [
        "--model",
        "gpt-4o-mini",
        "--input-format",
        "stream-json",
        "--output-format",
        "json",
    ];
    let mut cmd = run.command(Some((&server, Wire::OpenAi)), &args);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = format!("{{oops\n{{\"type\":\"assistant\"}}\n{}", user("Go."));
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("input line 1 skipped: not JSON"),
        "{stderr}"
    );
    assert!(stderr.contains("input line 2 skipped"), "{stderr}");
    assert_eq!(common::run::result_of(&out)["output"], "Fine.");

    let mut with_task = args.to_vec();
    with_task.push("A task.");
    let out = run
        .command(None, &with_task)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the first message on stdin"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_embedding_program_answers_the_approvals() {
    let bash = json!({"command": "echo approved-run"}).to_string();
    let write = json!({"file_path": "notes.txt", "content": "x"}).to_string();
    let script = common::run::replies(vec![
        Reply::tool("Bash", &bash),
        Reply::tool("Write", &write),
        Reply::text("One ran, one was refused."),
    ]);
    // Both calls would run in the default mode; these rules make them ask.
    let rules = "[permissions]\nask = [\"Bash(echo:*)\", \"Write\"]\n";
    let mut driven = drive(script, rules, &[]).await;
    driven.send(&user("Run and write.")).await;
    let answer = |id: &Value, response: Value| {
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}}).to_string() + "\n"
    };
    let asked = driven.until("control_request").await;
    let question = asked.last().unwrap();
    assert_eq!(question["request"]["subtype"], "can_use_tool");
    assert_eq!(question["request"]["tool_name"], "Bash");
    assert_eq!(question["request"]["input"]["command"], "echo approved-run");
    driven
        .send(&answer(
            &question["request_id"],
            json!({"behavior": "allow"}),
        ))
        .await;
    let asked = driven.until("control_request").await;
    let question = asked.last().unwrap();
    assert_eq!(question["request"]["tool_name"], "Write");
    assert_ne!(question["request_id"], asked.first().unwrap()["request_id"]);
    let no = json!({"behavior": "deny", "message": "Not in this workspace."});
    driven.send(&answer(&question["request_id"], no)).await;
    let done = driven.until("result").await;
    assert_eq!(done.last().unwrap()["status"], "complete", "{done:?}");
    driven.finish().await;

    let requests = driven.server.requests();
    let sent = requests[1].body["messages"].to_string();
    assert!(sent.contains("approved-run"), "{sent}");
    let sent = requests[2].body["messages"].to_string();
    assert!(sent.contains("Not in this workspace."), "{sent}");
    assert!(!driven.run.workspace.path().join("notes.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compact_control_line_compacts_before_the_next_model_call() {
    let bash = |command: &str| json!({"command": command}).to_string();
    let mut script = common::run::replies(vec![
        Reply::tool("Bash", &bash("true")),
        Reply::tool("Bash", &bash("sleep 1")),
        Reply::text("Done."),
    ]);
    script.aside = Some(Reply::text("SUMMARY: ran true, then slept."));
    let mut driven = drive(script, "", BYPASS).await;
    driven.send(&user("Run two commands.")).await;
    driven.until("tool_call").await;
    driven.until("tool_call").await;
    let compact = json!({"type": "control_request", "request_id": "c1",
        "request": {"subtype": "compact", "instructions": "Keep the exit codes."}});
    driven.send(&(compact.to_string() + "\n")).await;
    let seen = driven.until("result").await;
    let result = seen.last().unwrap();
    assert_eq!(result["status"], "complete", "{seen:?}");
    assert_eq!(result["compactions"], 1);
    let event = seen.iter().find(|e| e["type"] == "compaction").unwrap();
    assert_eq!(event["trigger"], "manual");
    assert_eq!(event["summarized"], true);
    driven.finish().await;
    let requests = driven.server.requests();
    // The two steps, the summary (with what to keep), and the call after
    // it.
    assert_eq!(requests.len(), 4);
    assert!(requests[2].body.get("tools").is_none());
    let summary = requests[2].body.to_string();
    assert!(summary.contains("Keep the exit codes."), "{summary}");
    let after = requests[3].body["messages"][1]["content"].to_string();
    assert!(
        after.contains("[kaizen compacted") && after.contains("SUMMARY: ran true"),
        "{after}"
    );
}

/// `/cost` and `/clear` are answered without the model: what the session
/// spent, and a conversation that starts over in the same session (kept
/// so in its log: a resumed session does not bring it back).
#[tokio::test(flavor = "multi_thread")]
async fn cost_and_clear_are_answered_without_the_model() {
    let script = common::run::replies(vec![
        Reply::text("Hi."),
        Reply::text("Fresh start."),
        Reply::text("Still fresh."),
    ]);
    let mut driven = drive(script, "", &[]).await;
    driven.send(&user("Remember the word pelican.")).await;
    driven.until("result").await;
    driven.send(&user("/cost")).await;
    let cost = driven.until("result").await;
    let cost = cost.last().unwrap();
    let said = cost["output"].as_str().unwrap();
    assert!(
        said.contains("over 1 model calls") && said.contains('$'),
        "{said}"
    );
    assert_eq!(cost["cycles_used"], 0);
    driven.send(&user("/clear")).await;
    let cleared = driven.until("result").await;
    assert_eq!(
        cleared.last().unwrap()["output"],
        "The conversation was cleared."
    );
    driven.send(&user("What was the word?")).await;
    let after = driven.until("result").await;
    let session = after.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(after.last().unwrap()["output"], "Fresh start.");
    driven.finish().await;
    // Two model calls so far: /cost and /clear made none.
    let requests = driven.server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body["messages"].to_string();
    assert!(!second.contains("pelican"), "{second}");
    assert!(second.contains("What was the word?"), "{second}");

    // Resumed, the session is still cleared.
    let out = driven
        .run
        .command(
            Some((&driven.server, Wire::OpenAi)),
            &[
                "--model",
                "gpt-4o-mini",
                "--output-format",
                "json",
                "--resume",
                &session,
                "And now?",
            ],
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(common::run::result_of(&out)["output"], "Still fresh.");
    let third = driven.server.requests()[2].body["messages"].to_string();
    assert!(!third.contains("pelican"), "{third}");
    assert!(
        third.contains("What was the word?") && third.contains("And now?"),
        "{third}"
    );
}

/// On a terminal, a line typed while the agent works is queued the same
/// way: the terminal says so, and the line reaches the next model call.
#[tokio::test(flavor = "multi_thread")]
async fn a_line_typed_at_the_terminal_while_it_works_is_queued() {
    use common::terminal::Terminal;
    let script = common::run::replies(vec![
        Reply::tool("Bash", &json!({"command": "sleep 2"}).to_string()),
        Reply::text("Done, with the note."),
    ]);
    let server = ModelServer::start(script).await.unwrap();
    let run = Run::builtins_only();
    let cmd = run.command(
        Some((&server, Wire::OpenAi)),
        &[
            "--model",
            "gpt-4o-mini",
            "--permission-mode",
            "bypassPermissions",
            "Wait a bit.",
        ],
    );
    let mut session = Terminal::spawn(cmd);
    session.expect("→ Bash");
    session.type_line("Also check the logs.");
    session.expect("queued for the next step: Also check the logs.");
    let code = session.finish();
    assert_eq!(code, Some(0), "{}", session.transcript());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "Also check the logs.");
}

/// Claude's Agent SDK for Python from PyPI: its source distribution, as
/// the wheels carry Claude Code's own binary, which these tests replace.
const AGENT_SDK_PYTHON: &[&str] = &["--no-binary=claude-agent-sdk", "claude-agent-sdk==0.2.189"];

/// Claude's Agent SDK for TypeScript from npm, without the optional
/// packages that carry Claude Code's own binary.
const AGENT_SDK_TS: &[&str] = &["--omit=optional", "@anthropic-ai/claude-agent-sdk@0.3.332"];

/// The SDK's session (`tests/agent_sdk/session.py` and `.mjs`): the SDK
/// starts `kaizen` as it starts Claude Code (no subcommand, Claude Code's
/// flags, its in-process MCP server in `--mcp-config`), handshakes, and
/// sends three turns: the first asks `can_use_tool` for a Write, which
/// the program allows with its own content, then calls the program's own
/// tool; the second is interrupted while its Bash call runs; the third
/// runs after the program switched to plan mode, which refuses the Write.
/// The program's own hooks see every prompt (adding to it) and the Bash
/// call.
/// Every message is parsed by the SDK's own code. `sdk` is the driver's
/// command, to which `kaizen`, the workspace, `more` and the environment
/// are added.
async fn agent_sdk_session(mut sdk: tokio::process::Command, more: &[&std::path::Path]) {
    let write = |content: &str| json!({"file_path": "notes.txt", "content": content}).to_string();
    let script = common::run::replies(vec![
        Reply::tool("Write", &write("the model's draft\n")),
        Reply::tool(
            "mcp__counter__tally",
            &json!({"text": "one two three"}).to_string(),
        ),
        Reply::text("Wrote it."),
        Reply::tool("Bash", &json!({"command": "sleep 30"}).to_string()),
        Reply::tool("Write", &write("again\n")),
        Reply::text("Plan mode refused it."),
    ]);
    let server = ModelServer::start(script).await.unwrap();
    let run = Run::builtins_only();
    run.set_config("[permissions]\nask = [\"Write\"]\n");
    // The SDK gives its CLI this process's environment: the one `kaizen
    // run` gets in these tests (its home, the model server).
    let kaizen = run.command(Some((&server, Wire::OpenAi)), &[]);
    sdk.arg(env!("CARGO_BIN_EXE_kaizen"))
        .arg(run.ws())
        .args(more)
        .env("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1")
        .kill_on_drop(true);
    for (key, value) in kaizen.get_envs() {
        match value {
            Some(value) => sdk.env(key, value),
            None => sdk.env_remove(key),
        };
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(180), sdk.output())
        .await
        .expect("the SDK's session ends within three minutes")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(report["server_info"]["runtime"], "kaizen", "{report}");

    // The first turn: init, the call, its question, the result.
    let first = report["turns"][0].as_array().unwrap();
    let init = &first[0];
    assert_eq!(init["kind"], "SystemMessage", "{first:?}");
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["data"]["permissionMode"], "default");
    let tools = init["data"]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("Write")), "{tools:?}");
    assert!(tools.contains(&json!("mcp__counter__tally")), "{tools:?}");
    assert_eq!(
        init["data"]["mcp_servers"],
        json!([{"name": "counter", "status": "connected"}])
    );
    let call = first
        .iter()
        .find(|m| m["kind"] == "AssistantMessage" && m["blocks"][0]["tool_use"] == "Write")
        .unwrap_or_else(|| panic!("no Write call in {first:?}"));
    let id = &call["blocks"][0]["id"];
    let asked = &report["asked"][0];
    assert_eq!(asked["tool"], "Write");
    assert_eq!(&asked["tool_use_id"], id);
    assert!(asked["suggestions"].as_u64().unwrap() >= 1);
    let result_block = first
        .iter()
        .find(|m| m["kind"] == "UserMessage")
        .unwrap_or_else(|| panic!("no tool result in {first:?}"));
    assert_eq!(&result_block["blocks"][0]["tool_result"], id);
    assert_eq!(result_block["blocks"][0]["is_error"], false);
    // The program's own tool: asked about, run in the program, its
    // answer the model's.
    assert_eq!(report["asked"][1]["tool"], "mcp__counter__tally");
    assert_eq!(report["tallied"], json!(["one two three"]));
    let tallied = first
        .iter()
        .filter(|m| m["kind"] == "UserMessage")
        .nth(1)
        .unwrap_or_else(|| panic!("no second tool result in {first:?}"));
    assert_eq!(tallied["blocks"][0]["is_error"], false, "{tallied}");
    assert!(tallied.to_string().contains("3 words"), "{tallied}");
    let result = first.last().unwrap();
    assert_eq!(result["kind"], "ResultMessage");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "Wrote it.");
    assert_eq!(result["is_error"], false);
    let notes = run.ws().join("notes.txt");
    // The program's edit of the input is what ran.
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "written by the program\n"
    );

    // The second: interrupted while Bash sleeps.
    let second = report["turns"][1].as_array().unwrap();
    assert!(
        second.iter().any(|m| m["kind"] == "interrupt sent"),
        "{second:?}"
    );
    let result = second.last().unwrap();
    assert_eq!(result["kind"], "ResultMessage", "{second:?}");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["session_id"], first.last().unwrap()["session_id"]);

    // The third, in plan mode: the Write is refused without a question.
    let third = report["turns"][2].as_array().unwrap();
    let result = third.last().unwrap();
    assert_eq!(result["result"], "Plan mode refused it.", "{third:?}");
    assert_eq!(result["permission_denials"][0]["tool_name"], "Write");
    assert_eq!(report["asked"].as_array().unwrap().len(), 2);
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "written by the program\n"
    );
    assert_eq!(
        report["hooked"],
        json!([
            "UserPromptSubmit",
            "UserPromptSubmit",
            "sleep 30",
            "UserPromptSubmit"
        ])
    );
    let first_request = server.requests()[0].body["messages"].to_string();
    assert!(
        first_request.contains("The program says hi."),
        "{first_request}"
    );
    assert_eq!(server.requests().len(), 6);
    assert!(
        server.requests()[2].body["messages"]
            .to_string()
            .contains("3 words")
    );
}

/// Where the tests keep what they install.
fn installs() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf()
}

#[tokio::test(flavor = "multi_thread")]
async fn claudes_agent_sdk_for_python_drives_kaizen_as_its_cli() {
    let python = kaizen_test_support::python::venv(
        &installs().join("python"),
        "agent-sdk",
        AGENT_SDK_PYTHON,
    );
    let mut sdk = tokio::process::Command::new(python);
    sdk.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/agent_sdk/session.py"
    ));
    agent_sdk_session(sdk, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claudes_agent_sdk_for_typescript_drives_kaizen_as_its_cli() {
    let installed =
        kaizen_test_support::npm::install(&installs().join("npm"), "agent-sdk", AGENT_SDK_TS);
    let mut sdk = tokio::process::Command::new("node");
    sdk.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/agent_sdk/session.mjs"
    ));
    agent_sdk_session(sdk, &[&installed.join("node_modules")]).await;
}
