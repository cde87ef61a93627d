//! Permissions through the real `kaizen run`: the terminal approval flow on
//! a real pseudo-terminal (once, always — kept in the user's config — and
//! refused with a reason), deny rules on paths holding for the file tools
//! and for programs in the OS sandbox, and the modes and flags.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{
    NETWORK_BASH, Run, bash, call_fields, completed, offered_tools, replies, result_of,
    tool_results,
};
use common::terminal::Terminal;
use kaizen_model_server::{ModelServer, Reply, Script, Wire};
use serde_json::{Value, json};

/// The statuses of a result's tool calls, in call order.
fn statuses(result: &Value) -> Vec<&str> {
    call_fields(result, "status")
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_the_user_allows_once_always_or_refuses_with_a_reason() {
    let run = Run::builtins_only();
    let config = run.home.path().join("config.toml");
    std::fs::write(&config, NETWORK_BASH).unwrap();
    let script = Script::new()
        .reply(bash("echo one"))
        .reply(bash("echo two"))
        .reply(bash("echo two"))
        .reply(bash("echo three"))
        .reply(Reply::text("Finished."));
    let server = ModelServer::start(script).await.unwrap();
    let cmd = run.command(
        Some((&server, Wire::OpenAi)),
        &["--model", "gpt-4o-mini", "Echo things"],
    );
    let mut session = Terminal::spawn(cmd);
    session.expect("Kaizen wants to run Bash");
    session.expect("echo one");
    session.expect("> ");
    session.type_line("maybe");
    session.expect("Answer 1, 2 or 3");
    session.type_line("1");
    session.expect("Kaizen wants to run Bash");
    session.expect("allow `Bash(echo two)` from now on");
    session.expect("> ");
    session.type_line("2");
    // The second `echo two` runs without a question; `echo three` asks.
    session.expect("Kaizen wants to run Bash");
    session.expect("echo three");
    session.expect("> ");
    session.type_line("3 use printf instead");
    let code = session.finish();
    assert_eq!(code, Some(0), "{}", session.transcript());
    let transcript = session.transcript();
    assert_eq!(
        transcript.matches("Kaizen wants to run Bash").count(),
        3,
        "{transcript}"
    );

    let requests = server.requests();
    let results = tool_results(&requests.last().unwrap().body);
    assert_eq!(results[..3], ["one", "two", "two"]);
    assert!(
        results[3].contains("The user refused to let Bash run: use printf instead"),
        "{}",
        results[3]
    );
    // "Always" was kept as a rule in the user's config, beside what was there.
    let kept: toml::Value = toml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        kept["permissions"]["allow"],
        toml::Value::Array(vec!["Bash(echo two)".into()])
    );
    assert!(
        kept["grants"]["bash"]["process"]["network"]
            .as_bool()
            .unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_an_ask_is_refused_naming_what_would_allow_it() {
    let run = Run::builtins_only();
    run.set_config(NETWORK_BASH);
    let (output, requests) = run
        .scripted_run(vec![bash("echo hi"), Reply::text("Finished.")], &[])
        .await;
    let result = result_of(&output);
    assert_eq!(statuses(&result), ["denied"]);
    let text = tool_results(&requests[1].body).join("\n");
    assert!(text.contains("nobody can be asked"), "{text}");
    assert!(text.contains("--allowedTools 'Bash(echo hi)'"), "{text}");
    assert!(text.contains("[permissions]"), "{text}");
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
    assert_eq!(
        result["permission_denials"][0]["tool_input"]["command"],
        "echo hi"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_rules_on_paths_hold_for_the_file_tools_and_for_bash() {
    const SECRET: &str = "sk-live-DO-NOT-LEAK-4242";
    let run = Run::builtins_only();
    let root = run.ws();
    std::fs::write(root.join(".env"), format!("API_KEY={SECRET}\n")).unwrap();
    std::fs::create_dir_all(root.join("config/deep")).unwrap();
    std::fs::write(root.join("config/deep/.env"), format!("TOKEN={SECRET}\n")).unwrap();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/guide.md"), "# Guide\n").unwrap();
    run.set_config("[permissions]\ndeny = [\"Read(.env)\", \"Edit(docs/**)\"]\n");
    let replies = vec![
        Reply::tool("Read", &json!({"file_path": root.join(".env")}).to_string()),
        bash("cat .env; cat config/deep/.env; echo end"),
        bash("grep -r DO-NOT-LEAK . ; cp .env leaked.txt; cat leaked.txt; echo end"),
        Reply::tool(
            "Grep",
            &json!({"pattern": "DO-NOT-LEAK", "output_mode": "content", "path": root}).to_string(),
        ),
        bash("echo extra >> docs/guide.md; echo status=$?"),
        Reply::tool(
            "Write",
            &json!({"file_path": root.join("docs/new.md"), "content": "x"}).to_string(),
        ),
        Reply::text("Finished."),
    ];
    let (output, requests) = run.scripted_run(replies, &[]).await;
    let result = completed(&output);
    let results = tool_results(&requests.last().unwrap().body);
    for (i, text) in results.iter().enumerate() {
        assert!(!text.contains(SECRET), "call {i} leaked the secret: {text}");
    }
    assert!(results[0].contains("Read(.env)"), "{}", results[0]);
    assert!(results[1].ends_with("end"), "{}", results[1]);
    assert!(
        results[4].contains("status=1"),
        "the guide is read-only: {}",
        results[4]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("docs/guide.md")).unwrap(),
        "# Guide\n"
    );
    assert!(results[5].contains("Edit(docs/**)"), "{}", results[5]);
    assert!(!root.join("docs/new.md").exists());
    assert_eq!(
        statuses(&result),
        [
            "denied", "success", "success", "success", "success", "denied"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn modes_and_flags_decide_as_claude_code_spells_them() {
    let run = Run::builtins_only();
    let script = || vec![bash("echo hi"), bash("ls"), Reply::text("Finished.")];

    let (output, requests) = run
        .scripted_run(script(), &["--permission-mode", "plan"])
        .await;
    let result = result_of(&output);
    assert_eq!(statuses(&result), ["denied", "denied"]);
    assert!(tool_results(&requests[2].body)[0].contains("plan mode"));

    let (output, requests) = run
        .scripted_run(script(), &["--disallowedTools", "Bash"])
        .await;
    let result = result_of(&output);
    let offered = offered_tools(&requests[0].body);
    assert!(
        !offered.contains(&"Bash") && offered.contains(&"Read"),
        "{offered:?}"
    );
    assert_eq!(statuses(&result), ["denied", "denied"]);

    run.set_config(NETWORK_BASH);
    let (output, _) = run
        .scripted_run(script(), &["--allowedTools", "Bash(echo:*) Read"])
        .await;
    assert_eq!(statuses(&result_of(&output)), ["success", "denied"]);

    let (output, requests) = run
        .scripted_run(script(), &["--permission-mode", "dontAsk"])
        .await;
    assert_eq!(statuses(&result_of(&output)), ["denied", "denied"]);
    assert!(tool_results(&requests[2].body)[0].contains("never asks"));

    let (output, _) = run
        .scripted_run(script(), &["--permission-mode", "bypassPermissions"])
        .await;
    assert_eq!(statuses(&result_of(&output)), ["success", "success"]);

    let (output, _) = run
        .scripted_run(script(), &["--permission-mode", "yolo"])
        .await;
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("unknown permission mode `yolo`") && err.contains("acceptEdits"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_json_reports_each_decision() {
    let script = replies(vec![bash("echo hi"), Reply::text("Finished.")]);
    let events = Run::builtins_only()
        .scripted(script)
        .model("gpt-4o-mini")
        .stream_json(&["--disallowedTools", "Bash(echo:*)", "Do the task."])
        .await
        .events();
    let decision = events
        .iter()
        .find(|event| event["type"] == "permission_decision")
        .expect("a permission_decision event");
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["by"], "rule");
    assert!(
        decision["source"]
            .as_str()
            .unwrap()
            .contains("--disallowedTools"),
        "{decision}"
    );
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["permission_denials"][0]["tool_name"], "Bash");
}
