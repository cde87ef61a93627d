//! Plugins' completions (the contract's `llm`) through the real `kaizen
//! run`: the `summarize` test plugin asks for one by role, the scripted
//! server answers on the role's model, and the run counts it; the
//! operator's caps refuse roles and spent shares; without the grant the
//! plugin does not load, and without a session there is no model.

#![allow(
    clippy::disallowed_methods,
    reason = "a test starts the programs it tests as a user would, outside Kaizen's launcher"
)]

mod common;

use common::run::{replies, results_sent, stream_run};
use kaizen_model_server::{ModelServer, Reply};
use serde_json::{Value, json};

/// `kaizen run` with the `summarize` plugin and `config` as the user's
/// config, against a server answering `script`: the output, its lines and
/// the server.
async fn run(config: &str, script: Vec<Reply>) -> (std::process::Output, Vec<Value>, ModelServer) {
    let plugin = kaizen_test_artifacts::plugin_dir("summarize");
    let args = [
        "--plugins",
        plugin.to_str().unwrap(),
        "Summarize the notes.",
    ];
    let ran = stream_run(config, replies(script), &args).await;
    (ran.output, ran.lines, ran.server)
}

fn summarize(arguments: Value) -> String {
    arguments.to_string()
}

const GRANTED: &str = "[grants.summarize]\nllm = true\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_plugins_completion_runs_on_its_roles_model_and_counts_in_the_run() {
    let config = format!("{GRANTED}[models]\nevaluator = \"gpt-4o-mini-judge\"\n");
    let replies = vec![
        Reply::tool(
            "Summarize",
            &summarize(json!({"text": "Kaizen runs tools as components."})),
        )
        .with_usage(100, 20),
        Reply::text("Tools are components.")
            .with_usage(30, 5)
            .with_model("gpt-4o-mini-judge"),
        Reply::text("The notes say tools are components.").with_usage(150, 10),
    ];
    let (output, lines, server) = run(&config, replies).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The plugin's request: the role's model, its prompt, no tools.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let asked = &requests[1].body;
    assert_eq!(asked["model"], "gpt-4o-mini-judge");
    assert!(
        asked
            .get("tools")
            .is_none_or(|t| t.as_array().unwrap().is_empty())
    );
    let messages = asked["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(
        messages[0]["content"],
        "Summarize the text in one sentence."
    );
    assert_eq!(messages[1]["content"], "Kaizen runs tools as components.");
    // Its answer is the tool's result, and the key never reached it.
    assert_eq!(results_sent(&server, 2), ["Tools are components."]);

    let completion = lines
        .iter()
        .find(|line| line["type"] == "plugin_completion")
        .expect("a plugin_completion event");
    assert_eq!(completion["plugin"], "summarize");
    assert_eq!(completion["role"], "evaluator");
    assert_eq!(completion["model"], "gpt-4o-mini-judge");
    assert_eq!(completion["input_tokens"], 30);
    assert!(completion["cost_usd"].as_f64().unwrap() > 0.0);

    // All three calls are in the run's totals; two were the loop's.
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["cycles_used"], 2);
    assert_eq!(result["tokens_used"]["input"], 280);
    assert_eq!(result["tokens_used"]["output"], 35);
    let loop_only = lines
        .iter()
        .filter(|line| line["type"] == "plugin_completion")
        .map(|line| line["cost_usd"].as_f64().unwrap())
        .sum::<f64>();
    assert!(result["cost_usd"].as_f64().unwrap() > loop_only);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operators_caps_refuse_a_role_and_a_spent_share() {
    let config = format!(
        "{GRANTED}[plugin-llm.plugins.summarize]\nroles = [\"planner\"]\nbudget-share = 0.0\n"
    );
    let replies = vec![
        Reply::tool(
            "Summarize",
            &summarize(json!({"text": "a", "role": "evaluator"})),
        )
        .with_tool(
            "Summarize",
            &summarize(json!({"text": "b", "role": "planner"})),
        ),
        Reply::text("Neither worked."),
    ];
    let (output, _, server) = run(&config, replies).await;
    assert!(output.status.success());
    // No completion reached the server.
    assert_eq!(server.requests().len(), 2);
    let results = results_sent(&server, 1);
    assert!(
        results[0].contains("plugin `summarize` may use the model roles planner, not `evaluator`"),
        "{results:?}"
    );
    assert!(
        results[1].contains("its share of the run's budget"),
        "{results:?}"
    );
}

/// A model with no price costs nothing by the price table, so no budget
/// would stop a plugin calling it: the operator's `max-calls` does.
#[tokio::test(flavor = "multi_thread")]
async fn a_plugins_completions_stop_at_its_call_cap_whatever_they_cost() {
    let config = format!(
        "{GRANTED}[plugin-llm.plugins.summarize]\nmax-calls = 1\n[models]\nplanner = \"unpriced-local-model\"\n"
    );
    let call = |text: &str| summarize(json!({"text": text, "role": "planner"}));
    let replies = vec![
        Reply::tool("Summarize", &call("a")),
        Reply::text("The summary."),
        Reply::tool("Summarize", &call("b")),
        Reply::text("Done."),
    ];
    let (output, _, server) = run(&config, replies).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = results_sent(&server, 3);
    assert!(
        results
            .iter()
            .any(|r| r.contains("its most in a run (max-calls = 1")),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_grant_the_plugin_does_not_load_and_tools_call_has_no_model() {
    let replies = vec![Reply::text("Nothing to do.")];
    let (output, _, _) = run("", replies).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("summarize"), "{stderr}");
    assert!(stderr.contains("`llm` capability"), "{stderr}");

    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), GRANTED).unwrap();
    let plugin = kaizen_test_artifacts::plugin_dir("summarize");
    let out = common::kaizen(
        home.path(),
        ws.path(),
        &[
            "tools",
            "call",
            "--plugins",
            plugin.to_str().unwrap(),
            "Summarize",
            r#"{"text":"x"}"#,
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("no model is available here"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hooks_get_completions_on_tool_events_and_the_sessions_own() {
    let plugin = kaizen_test_artifacts::plugin_dir("llm-hook");
    let script = vec![
        // UserPromptSubmit: the task restated.
        Reply::text("List the Markdown files.").with_usage(7, 5),
        Reply::tool("Glob", &json!({"pattern": "*.md"}).to_string()).with_usage(100, 10),
        // PostToolUse on Glob.
        Reply::text("Nothing but docs.").with_usage(11, 4),
        Reply::text("There are no Markdown files.").with_usage(120, 8),
        // SessionEnd, after the run's last turn.
        Reply::text("A short session.").with_usage(13, 3),
    ];
    let args = ["--plugins", plugin.to_str().unwrap(), "List the docs."];
    let ran = stream_run("[grants.llm-hook]\nllm = true\n", replies(script), &args).await;
    let result = ran.lines.last().unwrap();
    assert_eq!(result["status"], "complete", "{}", ran.stderr());
    let requests = ran.server.requests();
    assert_eq!(requests.len(), 5, "{}", ran.stderr());
    for aside in [0, 2, 4] {
        assert!(requests[aside].body.get("tools").is_none(), "{aside}");
    }
    // The restated task joined the first message the model saw.
    let first = requests[1].body["messages"].to_string();
    assert!(
        first.contains("llm-hook (gpt-4o-mini): List the Markdown files."),
        "{first}"
    );
    let sent = requests[3].body["messages"].to_string();
    assert!(
        sent.contains("llm-hook (gpt-4o-mini): Nothing but docs."),
        "{sent}"
    );
    let completions: Vec<&Value> = ran
        .lines
        .iter()
        .filter(|line| line["type"] == "plugin_completion")
        .collect();
    assert_eq!(completions.len(), 3, "{completions:?}");
    let roles: Vec<&str> = completions
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["planner", "evaluator", "evaluator"]);
    assert!(completions.iter().all(|c| c["plugin"] == "llm-hook"));
    // Every call counts, the one after the last turn too.
    assert_eq!(result["tokens_used"]["input"], 251);
    assert_eq!(result["tokens_used"]["output"], 30);
    // And the session keeps them: in its log, and in its totals.
    let sessions = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
            .arg("sessions")
            .args(args)
            .env("KAIZEN_HOME", ran.home())
            .output()
            .unwrap();
        common::succeeded(&out)
    };
    let id = result["session_id"].as_str().unwrap();
    let shown = sessions(&["show", id]);
    assert!(
        shown.contains("UserPromptSubmit hooks' completions"),
        "{shown}"
    );
    assert!(shown.contains("SessionEnd hooks' completions"), "{shown}");
    let listed: Value = serde_json::from_str(&sessions(&["list", "--json"])).unwrap();
    let cost = result["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0);
    assert_eq!(listed[0]["cost_usd"].as_f64(), Some(cost), "{listed}");
}
