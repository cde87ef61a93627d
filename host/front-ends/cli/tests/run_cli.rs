//! `kaizen run` end to end: the real binary, real providers over HTTP to a
//! scripted model server on loopback, and real tool plugins.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{KEY, Run, call_fields, offered_tools, result_ids_sent, result_of, results_sent};
use kaizen_model_server::{Fault, ModelServer, Reply, Script, Wire};
use serde_json::json;
use std::path::Path;

fn fs(op: &str, path: &str, content: &str) -> String {
    json!({"op": op, "path": path, "content": content}).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_step_task_edits_a_file_through_plugins() {
    let run = Run::new();
    std::fs::write(run.ws().join("greeting.txt"), "helo world\n").unwrap();
    let script = Script::new()
        .reply(Reply::tool("FsProbe", &fs("read", "greeting.txt", "")).with_usage(1000, 50))
        .reply(
            Reply::text("I will fix the typo. Done!")
                .with_tool("FsProbe", &fs("write", "greeting.txt", "hello world\n"))
                .with_usage(1200, 60),
        )
        .reply(Reply::text("Fixed the typo in greeting.txt.").with_usage(1300, 20));
    let ran = run
        .scripted(script)
        .model("gpt-4o-mini")
        .json(&["Fix the typo in greeting.txt"])
        .await;
    let (out, server) = (&ran.output, &ran.server);
    assert_eq!(out.status.code(), Some(0), "{}", ran.stderr());
    let result = ran.result();
    assert_eq!(result["status"], "complete");
    assert_eq!(result["output"], "Fixed the typo in greeting.txt.");
    assert_eq!(result["cycles_used"], 3);
    assert_eq!(result["tokens_used"]["input"], 3500);
    assert_eq!(result["tokens_used"]["output"], 130);
    assert_eq!(result["tokens_used"]["total"], 3630);
    assert!(result["cost_usd"].as_f64().unwrap() > 0.0, "{result}");
    assert_eq!(result["model_used"], "gpt-4o-mini");
    assert_eq!(result["runtime_name"], "kaizen");
    let calls = result["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["name"], "FsProbe");
    assert_eq!(calls[1]["arguments"]["op"], "write");
    assert_eq!(calls[1]["status"], "success");
    assert_eq!(
        std::fs::read_to_string(run.ws().join("greeting.txt")).unwrap(),
        "hello world\n"
    );
    // The model was shown the file it read.
    assert_eq!(results_sent(server, 1)[0], "helo world\n");
    // The request was a real streaming OpenAI request with the tools.
    let first = &server.requests()[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert!(first.stream);
    assert_eq!(first.headers["authorization"], format!("Bearer {KEY}"));
    let tools = offered_tools(&first.body);
    assert!(
        tools.contains(&"FsProbe") && tools.contains(&"Glob"),
        "{tools:?}"
    );
    // The key never leaks into what the user sees.
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_errors_are_fed_back_and_several_calls_answer_in_order() {
    let run = Run::new();
    let script = Script::new()
        .reply(
            Reply::tool("NoSuchTool", "{}")
                .with_tool("Greet", "{\"name\": ")
                .with_tool("Greet", r#"{"name": 42}"#)
                .with_tool("Greet", r#"{"name": "Ada"}"#),
        )
        .reply(Reply::text("Handled."));
    let ran = run.scripted(script).model("gpt-4o").json(&["go"]).await;
    let result = ran.result();
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(
        result_ids_sent(&ran.server, 1),
        ["call_1", "call_2", "call_3", "call_4"]
    );
    let sent = results_sent(&ran.server, 1);
    assert!(
        sent[0].contains("There is no tool named `NoSuchTool`"),
        "{sent:?}"
    );
    assert!(sent[1].contains("not valid JSON"), "{sent:?}");
    assert!(
        sent[2].contains("do not match its input schema"),
        "{sent:?}"
    );
    assert_eq!(sent[3], "Hello, Ada!");
    assert_eq!(
        call_fields(&result, "status"),
        ["error", "error", "error", "success"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_end_runs_with_their_status_and_exit_code() {
    let looping = || {
        (0..6).fold(Script::new(), |s, _| {
            s.reply(Reply::tool("Greet", r#"{"name":"again"}"#).with_usage(1_000_000, 0))
        })
    };
    let run = Run::new();
    let gpt_4o = |script| run.scripted(script).model("gpt-4o");
    let ran = gpt_4o(looping()).json(&["--max-cycles", "2", "loop"]).await;
    assert_eq!(ran.code(), Some(3));
    let result = ran.result();
    assert_eq!(result["status"], "max_cycles");
    assert_eq!(result["cycles_used"], 2);

    // gpt-4o input costs dollars per million tokens: two calls pass $1.
    let ran = gpt_4o(looping()).json(&["--budget-usd", "1", "loop"]).await;
    assert_eq!(ran.code(), Some(3));
    assert_eq!(ran.result()["status"], "budget_exceeded");

    let slow = Script::new().fault(Fault::Slow {
        delay_ms: 30_000,
        reply: Reply::text("too late"),
    });
    let ran = gpt_4o(slow).json(&["--timeout", "0.5", "wait"]).await;
    assert_eq!(ran.code(), Some(3));
    let result = ran.result();
    assert_eq!(result["status"], "timeout");
    assert!(
        result["error_message"]
            .as_str()
            .unwrap()
            .contains("time limit")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_faults_are_retried_then_reported() {
    let run = Run::new();
    let script = Script::new()
        .fault(Fault::Status {
            code: 500,
            retry_after: None,
            message: None,
        })
        .fault(Fault::Status {
            code: 429,
            retry_after: Some(1),
            message: None,
        })
        .fault(Fault::Truncated {
            reply: Reply::text("cut off"),
        })
        .reply(Reply::text("made it"));
    let ran = run.scripted(script).model("gpt-4o").json(&["hi"]).await;
    let result = ran.result();
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["output"], "made it");
    assert_eq!(ran.server.requests().len(), 4);

    let failing = (0..4).fold(Script::new(), |s, _| {
        s.fault(Fault::Status {
            code: 503,
            retry_after: None,
            message: Some("overloaded".into()),
        })
    });
    let ran = run.scripted(failing).model("gpt-4o").json(&["hi"]).await;
    assert_eq!(ran.code(), Some(1));
    let result = ran.result();
    assert_eq!(result["status"], "error");
    assert!(
        result["error_message"].as_str().unwrap().contains("503"),
        "{result}"
    );

    let denied = Script::new().fault(Fault::Status {
        code: 401,
        retry_after: None,
        message: None,
    });
    let ran = run
        .scripted(denied)
        .over(Wire::Anthropic)
        .model("claude-sonnet-4-5")
        .json(&["hi"])
        .await;
    let result = ran.result();
    assert_eq!(result["status"], "error");
    assert!(
        result["error_message"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY"),
        "{result}"
    );
    assert!(!result.to_string().contains(KEY));
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_and_ollama_complete_a_tool_task() {
    for (wire, model) in [
        (Wire::Anthropic, "claude-sonnet-4-5"),
        (Wire::Ollama, "ollama/qwen3"),
    ] {
        let run = Run::new();
        let script = Script::new()
            .reply(
                Reply::text("Let me greet.")
                    .with_tool("Greet", r#"{"name":"Grace"}"#)
                    .with_usage(500, 40),
            )
            .reply(Reply::text("Greeted Grace.").with_usage(600, 10));
        let ran = run
            .scripted(script)
            .over(wire)
            .model(model)
            .json(&["greet Grace"])
            .await;
        let result = ran.result();
        assert_eq!(result["status"], "complete", "{wire:?}: {result}");
        assert_eq!(result["output"], "Greeted Grace.");
        assert_eq!(result["tool_calls"][0]["name"], "Greet");
        assert_eq!(result["tokens_used"]["output"], 50, "{wire:?}");
        let requests = ran.server.requests();
        assert_eq!(requests.len(), 2);
        match wire {
            Wire::Anthropic => {
                assert_eq!(requests[0].path, "/v1/messages");
                assert_eq!(requests[0].headers["x-api-key"], KEY);
                assert!(requests[0].headers.contains_key("anthropic-version"));
                let second = requests[1].body.to_string();
                assert!(second.contains("Hello, Grace!"), "{second}");
            }
            Wire::Ollama => {
                assert_eq!(requests[0].path, "/api/chat");
                assert_eq!(requests[0].body["model"], "qwen3");
                assert!(result["cost_usd"].as_f64().unwrap() == 0.0);
            }
            Wire::OpenAi | Wire::Responses | Wire::Gemini => unreachable!(),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_json_prints_events_as_lines_and_the_result_last() {
    let run = Run::new();
    let script = Script::new()
        .reply(Reply::tool("Greet", r#"{"name":"Lin"}"#))
        .reply(Reply::text("bye"));
    let ran = run
        .scripted(script)
        .model("gpt-4o")
        .stream_json(&["hi"])
        .await;
    assert_eq!(ran.code(), Some(0));
    let lines = ran.events();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session_start",
            "assistant",
            "tool_call",
            "permission_decision",
            "tool_result",
            "assistant",
            "result"
        ]
    );
    // A read-only tool runs by the mode's default.
    assert_eq!(lines[3]["decision"], "allow");
    assert_eq!(lines[3]["by"], "mode");
    assert_eq!(lines[4]["output"], "Hello, Lin!");
    assert_eq!(lines[6]["status"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn text_output_streams_the_answer() {
    let run = Run::new();
    let script = Script::new().reply(Reply::text("All good here."));
    let ran = run.scripted(script).model("gpt-4o").text(&["check"]).await;
    assert_eq!(ran.code(), Some(0));
    assert_eq!(ran.stdout(), "All good here.\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn record_then_replay_needs_no_server() {
    let run = Run::new();
    let recording = run.home.path().join("session.jsonl");
    let script = Script::new()
        .reply(Reply::tool("Greet", r#"{"name":"Rec"}"#).with_usage(10, 5))
        .reply(Reply::text("Recorded.").with_usage(20, 5));
    let rec = recording.to_str().unwrap();
    let ran = run
        .scripted(script)
        .model("gpt-4o")
        .json(&["--record", rec, "x"])
        .await;
    assert_eq!(ran.result()["status"], "complete");
    let text = std::fs::read_to_string(&recording).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(!text.contains(KEY));
    drop(ran);

    let out = run
        .kaizen(None, &["--output-format", "json", "--replay", rec, "x"])
        .await;
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["output"], "Recorded.");
    assert_eq!(result["tool_calls"][0]["status"], "success");
    assert_eq!(result["tokens_used"]["total"], 40);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_provider_the_user_is_told_how_to_configure_one() {
    let run = Run::new();
    let out = run.kaizen(None, &["do something"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OLLAMA_HOST",
        "--replay",
    ] {
        assert!(err.contains(expected), "{expected} missing from: {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_replay_example_runs_with_no_key_and_no_network() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
        .current_dir(&repo)
        .args([
            "run",
            "--replay",
            "examples/list-sources.jsonl",
            "--cwd",
            "examples/sample-project",
            "--output-format",
            "json",
            "List the Rust source files in this project.",
        ])
        .env("KAIZEN_HOME", home.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OLLAMA_HOST")
        .output()
        .await
        .unwrap();
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{result}");
    assert_eq!(result["tool_calls"][0]["name"], "Glob");
    assert_eq!(result["tool_calls"][0]["status"], "success");
    assert!(result["output"].as_str().unwrap().contains("src/main.rs"));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_limits_are_usage_errors() {
    let run = Run::new();
    let server = ModelServer::start(Script::new()).await.unwrap();
    for args in [
        ["--timeout", "-1", "x"],
        ["--budget-usd", "-2", "x"],
        ["--max-cycles", "0", "x"],
        ["--output-format", "yaml", "x"],
    ] {
        let out = run.kaizen(Some((&server, Wire::OpenAi)), &args).await;
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn prices_are_set_in_the_users_config_never_the_projects() {
    let run = Run::new();
    run.set_config(
        "[pricing.\"my-local-model\"]\ninput = 1000.0\noutput = 0.0\ncached_input = 0.0\n",
    );
    // A repository that would make the model free, and so switch the
    // budget off.
    std::fs::write(
        run.ws().join("kaizen.toml"),
        "[pricing.\"my-local-model\"]\ninput = 0.0\noutput = 0.0\ncached_input = 0.0\n",
    )
    .unwrap();
    let ok = |input, output| Script::new().reply(Reply::text("ok").with_usage(input, output));
    let ran = run
        .scripted(ok(1000, 0))
        .model("my-local-model")
        .json(&["x"])
        .await;
    let result = ran.result();
    // 1000 tokens at $1000 per million.
    assert_eq!(result["cost_usd"], 1.0, "{result}");
    let stderr = ran.stderr();
    assert!(
        stderr.contains("[pricing] (prices are set in the user's config only)"),
        "{stderr}"
    );

    // An unknown model costs 0, with one warning.
    let ran = run
        .scripted(ok(5, 5))
        .model("mystery-model")
        .json(&["x"])
        .await;
    assert_eq!(ran.result()["cost_usd"], 0.0);
    let stderr = ran.stderr();
    assert_eq!(
        stderr
            .matches("no price is known for model `mystery-model`")
            .count(),
        1,
        "{stderr}"
    );
}

/// A machine without user namespaces (made so inside a user namespace of
/// the test's own, where `user.max_user_namespaces` is set to 0) and a user
/// who allowed degraded sandboxes: every run says, on stderr and in the
/// JSON result, which layers programs run without.
#[tokio::test(flavor = "multi_thread")]
async fn a_degraded_sandbox_is_reported_in_every_run() {
    let run = Run::new();
    run.set_config("[sandbox]\nallow-degraded = true\n");
    let script = Script::new()
        .reply(Reply::tool("Bash", r#"{"command":"echo ran"}"#))
        .reply(Reply::text("done"));
    let server = ModelServer::start(script).await.unwrap();
    let kaizen = run.command(
        Some((&server, Wire::OpenAi)),
        &["--output-format", "json", "x"],
    );
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["--user", "--map-root-user", "--fork", "bash", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"")
        .arg(kaizen.get_program())
        .args(kaizen.get_args());
    for (key, value) in kaizen.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = tokio::process::Command::from(cmd).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("unshare: ") && !out.status.success() && out.stdout.is_empty() {
        kaizen_test_support::missing_feature(
            env!("CARGO_TARGET_TMPDIR"),
            "unshare",
            &format!("util-linux unshare could not make the test's namespace: {stderr}"),
        );
        return;
    }
    let result = result_of(&out);
    assert_eq!(result["status"], "complete", "{stderr}");
    let warnings = result["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{result}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.contains("the OS sandbox is degraded"), "{warning}");
    assert!(warning.contains("user namespace"), "{warning}");
    assert!(
        stderr.contains("kaizen: warning: the OS sandbox is degraded"),
        "{stderr}"
    );

    // A complete sandbox: no warning, and the field is there, empty.
    let ran = run
        .scripted(Script::new().reply(Reply::text("done")))
        .json(&["x"])
        .await;
    assert_eq!(ran.result()["warnings"], json!([]));
}
